import { http, type Reply } from '../../support/http';

/**
 * Every answer the API gave the rolling-upgrade test, counted by status: the roll must cause no 5xx and no
 * request the balancer could not answer at all. A 5xx or a failed request is kept whole for the report.
 */
export class Answers {
  private readonly counts = new Map<string, number>();
  readonly failures: string[] = [];

  /** `http(baseUrl)` whose every answer is counted here. */
  client(baseUrl: string): ReturnType<typeof http> {
    const api = http(baseUrl);
    const call: typeof api.call = async (method, path, opts) => {
      try {
        const reply = await api.call(method, path, opts);
        this.count(method, path, reply);
        return reply;
      } catch (err) {
        this.counts.set('no answer', (this.counts.get('no answer') ?? 0) + 1);
        this.failures.push(`${method} ${path}: no answer (${(err as Error).message})`);
        throw err;
      }
    };
    return {
      get: (path, token) => call('GET', path, { token }),
      post: (path, token, body, headers) => call('POST', path, { token, body, headers }),
      put: (path, token, body) => call('PUT', path, { token, body }),
      patch: (path, token, body) => call('PATCH', path, { token, body }),
      delete: (path, token) => call('DELETE', path, { token }),
      call,
    };
  }

  /** An answer that came another way (a raw fetch), counted the same. */
  count(method: string, path: string, reply: Pick<Reply, 'status' | 'body'>): void {
    const key = String(reply.status);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    if (reply.status >= 500)
      this.failures.push(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 400)}`);
  }

  byStatus(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b)));
  }

  total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0);
  }
}
