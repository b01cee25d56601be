import { createServer, type Server } from 'node:http';
import { startBalancer, type Balancer } from '../../scripts/lib/balancer';
import { freePort } from '../../scripts/lib/free-port';
import { until } from '../support/wait';

/** An upstream that answers 200 after a short wait and counts what it answered, under its name. */
async function upstream(port: number, answered: string[], name: string): Promise<Server> {
  const server = createServer((req, res) => {
    setTimeout(() => {
      answered.push(`${name} ${req.headers['x-request'] as string}`);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    }, 2);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

// The balancer of `npm run cluster` and of the rolling-upgrade test (scripts/lib/balancer.ts): an instance
// replaced under traffic, drained first, costs no request. Stopped without the drain, a request sent on a
// kept-alive connection as the instance closes it answered 502 UPSTREAM_FAILED (CI, rolling-upgrade test).
describe('the balancer, while an instance is replaced under traffic', () => {
  const answered: string[] = [];
  let ports: number[];
  let servers: Server[];
  let balancer: Balancer;

  beforeAll(async () => {
    ports = [await freePort(), await freePort()];
    servers = await Promise.all(ports.map((p, i) => upstream(p, answered, `${i}.0`)));
    balancer = await startBalancer({ port: await freePort(), upstreams: ports });
  });
  afterAll(async () => {
    await balancer.close();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });

  it('answers every request once, with none refused, across five replacements', async () => {
    const { port } = balancer.server.address() as { port: number };
    const statuses: number[] = [];
    let sent = 0;
    let running = true;
    const client = async () => {
      while (running) {
        const id = String(++sent);
        const res = await fetch(`http://127.0.0.1:${port}/`, {
          method: 'POST',
          body: id,
          headers: { 'x-request': id },
        });
        statuses.push(res.status);
        await res.text();
      }
    };
    const clients = Array.from({ length: 8 }, client);
    // Each replacement waits until the new instance has answered: traffic crosses every one,
    // however slow the host (no count of requests in a fixed time).
    const answeredBy = (name: string) =>
      until(`${name} to answer`, () => answered.some((a) => a.startsWith(`${name} `)));
    await answeredBy('0.0');
    for (let round = 1; round <= 5; round++) {
      await balancer.drain(ports[0]!);
      await new Promise((r) => servers[0]!.close(r));
      servers[0] = await upstream(ports[0]!, answered, `0.${round}`);
      balancer.restore(ports[0]!);
      await answeredBy(`0.${round}`);
    }
    running = false;
    await Promise.all(clients);

    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(new Set(answered.map((a) => a.split(' ')[1])).size).toBe(answered.length);
    expect(answered.length).toBe(statuses.length);
  });
});
