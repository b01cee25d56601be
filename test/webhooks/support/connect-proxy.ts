import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

/** One CONNECT the proxy was asked for: the authority it named and the Proxy-Authorization it carried. */
export interface ConnectRecord {
  target: string;
  authorization: string | undefined;
  answered: number;
}

/**
 * A real HTTP CONNECT proxy on 127.0.0.1 (RFC 9110 §9.3.6), as an operator's egress proxy would be:
 * records every CONNECT, answers 407 while `refuse` is set (or when the Proxy-Authorization is not
 * `requireAuthorization`), otherwise opens a TCP connection to the named authority and pipes both ways.
 * It speaks only CONNECT: a plain request to it is answered 405, so nothing can reach a receiver
 * through it except inside a tunnel.
 */
export class ConnectProxy {
  readonly connects: ConnectRecord[] = [];
  /** Answer every CONNECT with this status instead of tunnelling (407, 403, 502 ...). */
  refuse: number | null = null;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly requireAuthorization: string | undefined,
  ) {}

  static async start(opts: { requireAuthorization?: string } = {}): Promise<ConnectProxy> {
    const server = createServer((_req, res) => res.writeHead(405).end('CONNECT only'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const proxy = new ConnectProxy(server, (server.address() as AddressInfo).port, opts.requireAuthorization);
    server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => proxy.tunnel(req, client, head));
    return proxy;
  }

  /** `http://127.0.0.1:<port>`, with credentials if given, as WEBHOOK_HTTP_PROXY takes it. */
  url(credentials?: string): string {
    return `http://${credentials ? `${credentials}@` : ''}127.0.0.1:${this.port}`;
  }

  private tunnel(req: IncomingMessage, client: Socket, head: Buffer): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client)).on('error', () => client.destroy());
    const authorization = req.headers['proxy-authorization'];
    const status =
      this.refuse ??
      (this.requireAuthorization !== undefined && authorization !== this.requireAuthorization ? 407 : null);
    const record: ConnectRecord = { target: req.url!, authorization, answered: status ?? 200 };
    this.connects.push(record);
    if (status !== null) {
      client.end(`HTTP/1.1 ${status} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return;
    }
    const at = req.url!.lastIndexOf(':');
    const host = req.url!.slice(0, at).replace(/^\[|\]$/g, '');
    const upstream = connect({ host, port: Number(req.url!.slice(at + 1)) });
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream));
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => {
      record.answered = 502;
      if (!client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
    });
    client.on('close', () => upstream.destroy());
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}
