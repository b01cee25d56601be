import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { actor, newOrg } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import {
  reaches,
  processedNotifications,
  signedSubscription,
  subscription,
  world,
  type World,
} from './payment-helpers';
import { until } from '../support/wait';

/**
 * A gate between the sandbox and the service's notification endpoint: while closed it answers
 * 503 (the service "down"); while open it forwards the request untouched, signature and all.
 */
async function gate(): Promise<{ url: string; open: boolean; target: string; seen: number; close(): Promise<void> }> {
  const state = { url: '', open: true, target: '', seen: 0, close: async () => undefined as void };
  const server: Server = createServer(async (req, res) => {
    state.seen++;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (!state.open) return void res.writeHead(503).end('down');
    const forwarded = await fetch(state.target, {
      method: 'POST',
      headers: {
        'content-type': req.headers['content-type']!,
        'sandbox-signature': String(req.headers['sandbox-signature']),
      },
      body: Buffer.concat(chunks),
      signal: AbortSignal.timeout(10_000),
    });
    res.writeHead(forwarded.status, { 'content-type': 'application/json' }).end(await forwarded.text());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`;
  state.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return state;
}

describe('sandbox notification delivery', () => {
  let svc: TestService;
  let w: World;
  let g: Awaited<ReturnType<typeof gate>>;

  beforeAll(async () => {
    g = await gate();
    svc = await startService({ set: 'B', env: { SANDBOX_NOTIFICATION_URL: g.url } });
    g.target = `${svc.baseUrl}/payments/sandbox/notifications`;
    w = await world(svc);
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await g?.close();
  });

  async function pay(id: string): Promise<string> {
    const res = await w.api.post(`/issuance/subscriptions/${id}/create-checkout-session`, w.investor.token, {
      paymentMethod: 'card',
      successUrl: 'https://i.example/ok',
      cancelUrl: 'https://i.example/no',
    });
    const done = await fetch(`${res.body.data.session_url}/complete`, { method: 'POST', redirect: 'manual' });
    expect(done.status).toBe(303); // the investor's redirect does not wait for the service to be reachable
    return res.body.data.session_id;
  }
  const stored = async (sessionId: string) =>
    (
      await svc.orm.em
        .getConnection()
        .execute(
          `select id, attempts, delivered_at from payment_sandbox_events where type = 'payment.succeeded' and body::jsonb->'data'->>'reference' = ?`,
          [sessionId],
        )
    )[0] as { id: string; attempts: number; delivered_at: Date | null };

  it('retries a notification the service refused, and the subscription moves once it is through', async () => {
    const id = await signedSubscription(w, 2);
    g.open = false;
    const sessionId = await pay(id);
    expect((await stored(sessionId)).delivered_at).toBeNull();
    g.open = true; // the next retry (0.5 s later) gets through
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
    const event = await stored(sessionId);
    expect(event.delivered_at).not.toBeNull();
    expect(event.attempts).toBeGreaterThanOrEqual(2);
  });

  it('resends what is still undelivered when the operator asks, and the service takes it once', async () => {
    const id = await signedSubscription(w, 2);
    g.open = false;
    const sessionId = await pay(id);
    // The first try and the 0.5 s and 2 s retries all meet the closed gate.
    await until(
      `the sandbox's first three tries of ${sessionId}`,
      () => stored(sessionId),
      (e) => (e?.attempts ?? 0) >= 3,
    );
    expect(await subscription(w, id)).toMatchObject({ status: 'pending_payment', payment_status: 'pending' });
    g.open = true;
    // Staff of another organisation resend nothing of this one's: the event stays where it was.
    const before = await stored(sessionId);
    const outsider = await actor(svc, newOrg(), ['staff']);
    const theirs = await w.api.post('/payments/sandbox/operator/notifications/redeliver', outsider.token);
    expect([theirs.status, theirs.body.data?.redelivered]).toEqual([200, 0]);
    expect(await stored(sessionId)).toEqual(before);
    const res = await w.api.post('/payments/sandbox/operator/notifications/redeliver', w.staff.token);
    expect(res.body.data.redelivered).toBeGreaterThanOrEqual(1);
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
    const { id: eventId } = await stored(sessionId);
    expect((await processedNotifications(svc, 'sandbox')).filter((r) => r.event_id === eventId)).toHaveLength(1);
  });
});
