import { randomUUID } from 'node:crypto';
import { createOffering, createSubscription } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { openCheckout, reaches } from '../payments/payment-helpers';
import { inReview } from '../support/in-review';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';

/**
 * Text that the database cannot store is refused at the door, before a workflow or a processor
 * sees it, and text the service cuts is cut between characters (docs/decisions/0360-well-formed-text-at-the-door.md).
 * Each answer comes well inside COMMAND_TIMEOUT_MS (60 s by default): a command that hung on a
 * projection it could never write would answer 503 COMMAND_OUTCOME_UNKNOWN only at its end.
 */
const ANSWER_BOUND_MS = 10_000;

describe('well-formed text at the door, Set B', () => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    svc = await startService({ set: 'B' });
    w = await lifecycleWorld(svc);
  });
  afterAll(() => svc?.stop());

  /** A POST answered or not within 90 s (past the command deadline), with how long it took. */
  async function timedPost(path: string, token: string, body: unknown) {
    const started = Date.now();
    const res = await fetch(svc.baseUrl + path, {
      method: 'POST',
      // A key on every command: the money routes refuse one without it (docs/decisions/0373-idempotency-key-required-where-money-moves.md).
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
      },
      // JSON.stringify writes a lone surrogate as its escape (\ud800), as any client's encoder does.
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(90_000),
    });
    const text = await res.text();
    const ms = Date.now() - started;
    // The time is in the compared answer only when it is past the bound, so a failure says how long it took.
    return {
      status: res.status,
      body: text ? JSON.parse(text) : undefined,
      time: ms < ANSWER_BOUND_MS ? 'in time' : `${ms} ms`,
    };
  }

  it('refuses a lone surrogate in a create at once (422 naming the field) and holds none of the capacity', async () => {
    const offering = await createOffering(w.api, w.staff.token, {
      offering: { name: 'Capped', maxAmount: '1000.00' },
      securityClass: { name: 'Common', pricePerUnit: '100.00' },
    });
    const res = await timedPost(`/issuance/offerings/${offering.offeringId}/subscriptions`, w.investor.token, {
      securityClassId: offering.securityClassId,
      unitsSubscribed: 5,
      accreditationStatus: '\ud800',
    });
    const read = await w.api.get(`/issuance/offerings/${offering.offeringId}`, w.staff.token);
    expect({ status: res.status, time: res.time, committed: read.body.data.committed_amount }).toEqual({
      status: 422,
      time: 'in time',
      committed: '0.00',
    });
    expect(res.body.error.details).toEqual([
      { in: 'body', path: 'accreditationStatus', message: expect.stringMatching(/surrogate/) },
    ]);
    // The whole capacity is still there to take.
    expect((await createSubscription(w.api, w.investor.token, offering, { unitsSubscribed: 10 })).status).toBe(201);
  }, 120_000);

  it.each(['reject', 'request-info'])(
    'refuses a %s whose reason holds a lone surrogate at once, and the subscription takes the next command',
    async (op) => {
      const s = await inReview(svc, w);
      const res = await timedPost(`/issuance/subscriptions/${s.id}/${op}`, w.staff.token, {
        reason: 'Missing proof of funds \udc00',
      });
      expect({ status: res.status, time: res.time }).toEqual({ status: 422, time: 'in time' });
      expect(res.body.error.details).toEqual([
        { in: 'body', path: 'reason', message: expect.stringMatching(/surrogate/) },
      ]);
      expect((await w.api.get(`/issuance/subscriptions/${s.id}`, w.investor.token)).body.data.status).toBe(
        'pending_review',
      );
      const next = await timedPost(`/issuance/subscriptions/${s.id}/${op}`, w.staff.token, { reason: 'Fine now' });
      expect({ status: next.status, time: next.time }).toEqual({ status: 200, time: 'in time' });
    },
    120_000,
  );

  it('keeps whole characters where the audit entry of a refund cuts its reason at 200, and answers 200 once the money moved', async () => {
    // Paid at the sandbox's checkout page, so the sandbox holds the money a refund gives back.
    const s = await w.signed();
    const checkout = await openCheckout(w, s.id);
    const paid = await fetch(`${checkout.session_url}/complete`, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
    await reaches(w, s.id, { status: 'pending_review', payment_status: 'received' });
    expect((await w.post(s.id, 'reject', w.staff, { reason: 'Not eligible' })).status).toBe(200);
    const reason = `${'a'.repeat(199)}😀 and the rest of the reason`;
    const res = await timedPost(`/issuance/subscriptions/${s.id}/refund`, w.admin.token, { reason });
    expect({ status: res.status, time: res.time, error: res.body.error ?? null }).toEqual({
      status: 200,
      time: 'in time',
      error: null,
    });
    expect(res.body.data).toMatchObject({ status: 'rejected', amount_refunded: s.total_amount });
    const [entry] = await svc.orm.em
      .getConnection()
      .execute<{ after: { reason: string } }[]>(
        `select after from audit_events where subject_id = ? and action = 'subscription.refund'`,
        [s.id],
      );
    expect(entry?.after.reason).toBe(`${'a'.repeat(199)}😀`);
  }, 120_000);
});
