import { createServer, type Server } from 'node:http';
import { logger } from './logger';
import { scrape } from './metrics';

/**
 * GET /metrics on a port of its own (METRICS_PORT for the API, WORKER_METRICS_PORT for a worker),
 * bound to METRICS_HOST: what Prometheus scrapes never shares the public API's port, so it is
 * neither reachable from the internet nor counted against clients' limits.
 */
export function serveMetrics(host: string, port: number, name: string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    scrape().then(
      ({ contentType, body }) =>
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(body),
      (err: unknown) => {
        logger.error({ err }, 'metrics scrape failed');
        res.writeHead(500).end();
      },
    );
  });
  server.requestTimeout = 10_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      logger.info({ host, port: (server.address() as { port: number }).port }, `${name} metrics served`);
      resolve(server);
    });
  });
}
