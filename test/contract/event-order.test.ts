import { randomUUID } from 'node:crypto';
import { SubscriptionEventData } from '../../api/openapi/event-schemas';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';

/**
 * Events an integrator can join and order (docs/decisions/0117-investor-id.md,
 * docs/decisions/0118-event-sequence.md): every event a
 * subscription publishes carries its investor_id and a per-subscription sequence 1, 2, 3, … with
 * no gaps, and its data is what the webhooks section of the document says.
 */
describe('subscription events carry investor_id and a gapless per-subscription sequence', () => {
  let svc: TestService;
  let w: LifecycleWorld;
  beforeAll(async () => {
    svc = await startService({ set: 'A' });
    w = await lifecycleWorld(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  it('numbers a whole Set A wire lifecycle 1..n in publish order, matching the documented data', async () => {
    const s = await w.inReviewByWire();
    await w.post(s.id, 'request-info', w.staff, { reason: 'proof of address' });
    const approved = await w.post(s.id, 'approve', w.staff);
    expect(approved.status).toBe(200);
    const done = await w.api.post(
      '/issuance/reconciliations',
      w.staff.token,
      { referenceCode: s.reference_code, amount: s.total_amount },
      { 'idempotency-key': randomUUID() },
    );
    expect(done.body.data.status).toBe('completed');
    expect(done.body.data.investor_id).toBe(w.investor.userId);

    const events = await w.events(s.id);
    expect(events.map((e) => e.type)).toEqual([
      'subscription.created',
      'subscription.signed',
      'subscription.info_requested',
      'subscription.approved',
      'subscription.funded',
      'subscription.completed',
    ]);
    expect(events.map((e) => e.data.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const e of events) {
      expect(e.data.investor_id).toBe(w.investor.userId);
      expect(SubscriptionEventData.safeParse(e.data).error?.issues ?? []).toEqual([]);
    }
  });

  it('keeps each subscription its own count', async () => {
    const [a, b] = [await w.create(), await w.create()];
    await w.post(a.id, 'request-signature', w.investor);
    await w.sign(a.id);
    await w.api.delete(`/issuance/subscriptions/${b.id}`, w.investor.token);
    expect((await w.events(a.id)).map((e) => e.data.sequence)).toEqual([1, 2]);
    expect((await w.events(b.id)).map((e) => [e.type, e.data.sequence])).toEqual([
      ['subscription.created', 1],
      ['subscription.cancelled', 2],
    ]);
  });
});
