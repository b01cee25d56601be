import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A consumer for load: verifies each signature against the secret of the hook in the path and
 * counts requests per delivery id. Answers 200 at once, except on `/hang/...`, which takes the
 * request and never answers (an endpoint that hangs), counting what it holds.
 */
export async function startCountingSink() {
  const secrets = new Map<string, string>();
  const byDelivery = new Map<string, number>();
  let total = 0;
  let bad = 0;
  let hanging = 0;
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/hang/')) {
      hanging++;
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const hook = (req.url ?? '').split('/')[2] ?? '';
      const want = Buffer.from(
        `sha256=${createHmac('sha256', secrets.get(hook) ?? '')
          .update(body)
          .digest('hex')}`,
      );
      const got = Buffer.from(String(req.headers['x-service-signature'] ?? ''));
      if (got.length !== want.length || !timingSafeEqual(got, want)) {
        bad++;
        res.statusCode = 401;
        return res.end();
      }
      total++;
      const id = String(req.headers['x-service-delivery-id']);
      byDelivery.set(id, (byDelivery.get(id) ?? 0) + 1);
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (hook: string, secret: string) => {
      secrets.set(hook, secret);
      return `${base}/h/${hook}`;
    },
    /** Registers the secret of a hook whose URL was made before the secret was known. */
    secret: (hook: string, secret: string) => secrets.set(hook, secret),
    base,
    /** A URL that never answers. */
    hangingUrl: (hook: string) => `${base}/hang/${hook}`,
    hanging: () => hanging,
    total: () => total,
    bad: () => bad,
    received: (deliveryId: string) => byDelivery.get(deliveryId) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
