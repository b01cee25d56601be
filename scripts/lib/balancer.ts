import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/**
 * A small round-robin reverse proxy in front of the API instances of `npm run cluster` (one port,
 * like a load balancer in production). It appends the peer to X-Forwarded-For, so the API runs with
 * TRUST_PROXY on. A request that cannot reach an instance at all (refused: the instance is down)
 * goes to the next one; nothing was sent, so that is safe for any method. An instance that fails
 * is skipped for a second.
 */
export function startBalancer(opts: {
  port: number;
  host?: string;
  upstreams: number[];
  timeoutMs?: number;
}): Promise<Server> {
  const downUntil = new Map<number, number>();
  let next = 0;
  const pick = (tried: Set<number>) => {
    for (let i = 0; i < opts.upstreams.length; i++) {
      const port = opts.upstreams[next++ % opts.upstreams.length]!;
      if (!tried.has(port) && (downUntil.get(port) ?? 0) <= Date.now()) return port;
    }
    return opts.upstreams.find((p) => !tried.has(p));
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 16 * 1024 * 1024) req.destroy();
      else chunks.push(c);
    });
    req.on('end', () => forward(req, res, Buffer.concat(chunks), new Set()));
  });

  function forward(req: IncomingMessage, res: ServerResponse, body: Buffer, tried: Set<number>): void {
    const port = pick(tried);
    if (port === undefined) {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          success: false,
          error: { code: 'UPSTREAM_UNAVAILABLE', message: 'No API instance answered', details: null },
        }),
      );
      return;
    }
    tried.add(port);
    const forwardedFor = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
    const upstream = request(
      {
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-forwarded-for': forwardedFor },
        timeout: opts.timeoutMs ?? 95_000,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('timeout', () => upstream.destroy(new Error('upstream timeout')));
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      downUntil.set(port, Date.now() + 1000);
      if (err.code === 'ECONNREFUSED' && !res.headersSent) return forward(req, res, body, tried);
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            success: false,
            error: { code: 'UPSTREAM_FAILED', message: 'The API instance failed mid-request; retry', details: null },
          }),
        );
      } else res.destroy();
    });
    upstream.end(body);
  }

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => resolve(server));
  });
}
