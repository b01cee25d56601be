import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  body: any;
  ms: number;
}

/**
 * One HTTP/1.1 request written byte for byte over a socket, for what fetch refuses to send (a NUL
 * or any byte in a header value): the status and the JSON body of the answer, and how long it took.
 */
export function rawRequest(
  baseUrl: string,
  req: { method: string; path: string; headers: [string, string | Buffer][]; body?: string },
  timeoutMs = 30_000,
): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const body = Buffer.from(req.body ?? '', 'utf8');
  const head = Buffer.concat([
    Buffer.from(`${req.method} ${req.path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: close\r\n`, 'latin1'),
    ...req.headers.map(([name, value]) =>
      Buffer.concat([Buffer.from(`${name}: `, 'latin1'), Buffer.from(value), Buffer.from('\r\n', 'latin1')]),
    ),
    Buffer.from(body.length ? `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` : '', 'latin1'),
    Buffer.from('\r\n', 'latin1'),
  ]);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(Buffer.concat([head, body])));
    const chunks: Buffer[] = [];
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const payload = text.slice(text.indexOf('\r\n\r\n') + 4);
      let parsed: unknown;
      try {
        // Koa answers JSON with a Content-Length, never chunked.
        parsed = payload ? JSON.parse(payload) : undefined;
      } catch {
        parsed = payload;
      }
      resolve({ status, body: parsed, ms: Date.now() - started });
    });
  });
}
