import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay from a loopback port to a real server, opened when a test says so: a dependency
 * that is not listening yet, then is. Bytes pass untouched (PostgreSQL's protocol, Temporal's gRPC),
 * and on the way to the target may be held a while (`holdNext`): a request slow on its way.
 */
export class TcpRelay {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private heldMs = 0;

  constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  /** Starts listening on `port`; from now on each connection is piped to the target. */
  open(): Promise<void> {
    const server = createServer((inbound) => {
      const outbound = connect(this.target.port, this.target.host);
      for (const socket of [inbound, outbound]) {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
        socket.once('error', () => {
          inbound.destroy();
          outbound.destroy();
        });
      }
      // Towards the target in order, each chunk after the one before; a held one holds those behind it.
      let sent = Promise.resolve();
      inbound.on('data', (chunk) => {
        const holdMs = this.heldMs;
        this.heldMs = 0;
        sent = sent
          .then(() => holdMs > 0 && new Promise((r) => setTimeout(r, holdMs)))
          .then(() => void outbound.write(chunk));
      });
      inbound.once('end', () => void sent.then(() => outbound.end()));
      outbound.pipe(inbound);
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
  }

  /** The next bytes any connection sends towards the target wait `ms` first. */
  holdNext(ms: number): void {
    this.heldMs = ms;
  }

  /** Stops listening and cuts every relayed connection. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** `host:port` or a URL's host and port, as the relay's target. */
export function hostAndPort(address: string): { host: string; port: number } {
  const url = new URL(address.includes('://') ? address : `tcp://${address}`);
  return { host: url.hostname === 'localhost' ? '127.0.0.1' : url.hostname, port: Number(url.port) };
}
