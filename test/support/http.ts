/** A small real-HTTP client for tests: every call goes over a socket to the running API. */
export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export function http(baseUrl: string) {
  async function call<T = any>(
    method: string,
    path: string,
    opts: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {},
  ): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let payload: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(opts.body);
    }
    const res = await fetch(baseUrl + path, { method, headers, body: payload, signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }
  return {
    get: <T = any>(path: string, token?: string) => call<T>('GET', path, { token }),
    post: <T = any>(path: string, token?: string, body?: unknown, headers?: Record<string, string>) =>
      call<T>('POST', path, { token, body, headers }),
    put: <T = any>(path: string, token?: string, body?: unknown) => call<T>('PUT', path, { token, body }),
    patch: <T = any>(path: string, token?: string, body?: unknown) => call<T>('PATCH', path, { token, body }),
    delete: <T = any>(path: string, token?: string) => call<T>('DELETE', path, { token }),
    call,
  };
}
