import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  /** The form fields Stripe's SDK sent, as `line_items[0][price_data][unit_amount]` → "2000". */
  form: URLSearchParams;
}

/**
 * A pass-through in front of stripe-mock that keeps every request it forwards, so a test reads
 * exactly what the adapter sent to Stripe (stripe-mock checks the shape, not the values). Each
 * Checkout Session it creates gets an id of its own, as Stripe's would (stripe-mock answers every
 * create with one fixture id).
 */
export async function recordingProxy(target: string): Promise<{
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}> {
  const requests: RecordedRequest[] = [];
  let sessions = 0;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    requests.push({
      method: req.method ?? 'GET',
      path: (req.url ?? '').split('?')[0]!,
      form: new URLSearchParams(body.toString('utf8')),
    });
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
    ) as Record<string, string>;
    try {
      const answer = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers,
        body: body.length ? body : undefined,
        signal: AbortSignal.timeout(10_000),
      });
      let text = await answer.text();
      if (req.method === 'POST' && req.url === '/v1/checkout/sessions' && answer.ok) {
        const session = JSON.parse(text) as { id: string };
        text = JSON.stringify({ ...session, id: `cs_test_proxy_${++sessions}_${Date.now()}` });
      }
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      res.end(text);
    } catch (err) {
      res.writeHead(502).end(String(err));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
