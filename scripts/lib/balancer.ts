import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** A running balancer: its server, and the operator's hand on each upstream. */
export interface Balancer {
  server: Server;
  /**
   * Takes an upstream out of rotation and resolves once the requests it is answering have ended: stop
   * the instance after this, never before (a keep-alive connection to a stopping instance races its close).
   */
  drain(port: number): Promise<void>;
  /** Puts a drained upstream back in rotation. */
  restore(port: number): void;
  close(): Promise<void>;
}

/**
 * A small round-robin reverse proxy in front of the API instances of `npm run cluster` (one port,
 * like a load balancer in production). It appends the peer to X-Forwarded-For, so the API runs with
 * TRUST_PROXY on. A request that cannot reach an instance at all (refused: the instance is down)
 * goes to the next one; nothing was sent, so that is safe for any method. An instance that fails
 * is skipped for a second; a drained one until it is restored.
 */
export function startBalancer(opts: {
  port: number;
  host?: string;
  upstreams: number[];
  timeoutMs?: number;
}): Promise<Balancer> {
  const downUntil = new Map<number, number>();
  const drained = new Set<number>();
  const inFlight = new Map<number, number>();
  const idle = new Map<number, (() => void)[]>();
  // One pool of kept-alive connections per upstream, dropped whole when it is drained: a connection
  // the stopped instance closed must never carry a request to the one that replaces it (seen under
  // load: 502s right after a restore, on sockets whose close had not been read yet).
  const agents = new Map(opts.upstreams.map((p) => [p, new Agent({ keepAlive: true })]));
  let next = 0;
  const pick = (tried: Set<number>) => {
    const open = opts.upstreams.filter((p) => !drained.has(p) && !tried.has(p));
    for (let i = 0; i < opts.upstreams.length; i++) {
      const port = opts.upstreams[next++ % opts.upstreams.length]!;
      if (open.includes(port) && (downUntil.get(port) ?? 0) <= Date.now()) return port;
    }
    return open[0];
  };
  const settle = (port: number) => {
    const left = (inFlight.get(port) ?? 1) - 1;
    inFlight.set(port, left);
    if (left === 0) for (const wake of idle.get(port)?.splice(0) ?? []) wake();
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
    inFlight.set(port, (inFlight.get(port) ?? 0) + 1);
    let settled = false;
    const done = () => {
      if (!settled) ((settled = true), settle(port));
    };
    res.once('close', done);
    const forwardedFor = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
    const upstream = request(
      {
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-forwarded-for': forwardedFor },
        agent: agents.get(port),
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
      if (err.code === 'ECONNREFUSED' && !res.headersSent) {
        done();
        return forward(req, res, body, tried);
      }
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
    server.listen(opts.port, opts.host ?? '127.0.0.1', () =>
      resolve({
        server,
        async drain(port) {
          drained.add(port);
          if (inFlight.get(port)) await new Promise<void>((wake) => idle.set(port, [...(idle.get(port) ?? []), wake]));
          agents.get(port)?.destroy();
          agents.set(port, new Agent({ keepAlive: true }));
        },
        restore(port) {
          drained.delete(port);
        },
        close: () =>
          new Promise((done) => {
            for (const agent of agents.values()) agent.destroy();
            server.close(() => done());
          }),
      }),
    );
  });
}
