import type { Context } from 'koa';

const API_TIMEOUT_MS = 30_000;

export interface ApiAnswer<T = any> {
  status: number;
  ok: boolean;
  data: T;
  error: { code: string; message: string; details?: unknown } | null;
}

/**
 * The console's way into the service: the same JSON API every other client uses, over HTTP, with
 * the signed-in staff member's access token. There is no other path to data or commands, so the
 * API's roles, organisation scoping and validation decide what the console may do.
 *
 * It calls the address the browser's own request arrived at (a listening socket of this very
 * process), never one taken from a header a client controls.
 */
export function apiClient(
  ctx: Context,
  accessToken: string,
  clientHeaders: (address: string) => Record<string, string>,
) {
  const socket = ctx.req.socket;
  const host = socket.localFamily === 'IPv6' ? `[${socket.localAddress}]` : socket.localAddress;
  const base = `http://${host}:${socket.localPort}`;
  const requestId = ctx.get('x-request-id');
  // The person's address, as this request's ctx.ip says it, so the API's audit entries and limits name them, not us.
  const forwarded = clientHeaders(ctx.ip);

  async function call<T>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<ApiAnswer<T>> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${accessToken}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(requestId ? { 'x-request-id': requestId } : {}),
        // The form's own key (console/form-keys.ts): a form sent twice is one command.
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        ...forwarded,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(API_TIMEOUT_MS),
    });
    const text = await res.text();
    const parsed = text ? (JSON.parse(text) as { data?: T; error?: ApiAnswer['error'] }) : {};
    return { status: res.status, ok: res.ok, data: parsed.data as T, error: parsed.error ?? null };
  }

  return {
    get: <T = any>(path: string) => call<T>('GET', path),
    post: <T = any>(path: string, body: unknown = {}, opts: { idempotencyKey?: string } = {}) =>
      call<T>('POST', path, body, opts.idempotencyKey),
    patch: <T = any>(path: string, body: unknown) => call<T>('PATCH', path, body),
    put: <T = any>(path: string, body: unknown) => call<T>('PUT', path, body),
    delete: (path: string) => call<null>('DELETE', path),
  };
}
export type ApiClient = ReturnType<typeof apiClient>;
