import { randomUUID } from 'node:crypto';
import { actor, newOrg } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { openCheckout, reaches, signedSubscription, world, type World } from './payment-helpers';

/**
 * Each processor refund a staff refund asks for is a row before the processor is called and holds its
 * outcome after (docs/decisions/0374-refund-intents.md); staff read them on the subscription. Set B,
 * the sandbox processor.
 */
describe('refund intents', () => {
  let svc: TestService;
  let w: World;

  beforeAll(async () => {
    svc = await startService({ set: 'B' });
    w = await world(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  const sql = <T>(query: string, params: unknown[]) => svc.orm.em.getConnection().execute<T[]>(query, params);
  const refund = (id: string, body: Record<string, unknown>, key = randomUUID()) =>
    w.api.post(`/issuance/subscriptions/${id}/refund`, w.admin.token, body, { 'idempotency-key': key });
  const intents = async (id: string, token = w.admin.token) =>
    w.api.get(`/issuance/subscriptions/${id}/refunds`, token);

  /** Paid at the sandbox's checkout (50.00 USD), then voided: its money may go back. */
  async function voidedPaid(): Promise<{ id: string; payment: string }> {
    const id = await signedSubscription(w, 4);
    const session = await openCheckout(w, id);
    const paid = await fetch(`${session.session_url}/complete`, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(paid.status).toBe(303);
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
    const voided = await w.api.post(
      `/issuance/subscriptions/${id}/void`,
      w.admin.token,
      { reason: 'withdrawn' },
      { 'idempotency-key': randomUUID() },
    );
    expect(voided.status).toBe(200);
    return { id, payment: session.session_id };
  }

  it('records a refund the processor made as succeeded, with its refund id and the request that asked for it', async () => {
    const { id, payment } = await voidedPaid();
    const key = randomUUID();
    const done = await refund(id, { amount: '20.00', reason: 'part of it' }, key);
    expect(done.status).toBe(200);
    const ledger = await sql<{ id: string; amount_cents: string; idempotency_key: string }>(
      'select id, amount_cents::text, idempotency_key from payment_sandbox_refunds where reference = ?',
      [payment],
    );
    expect(ledger).toHaveLength(1);

    const read = await intents(id);
    expect(read.status).toBe(200);
    expect(read.body.data.items).toEqual([
      {
        id: expect.any(String),
        payment,
        amount: '20.00',
        currency: 'USD',
        status: 'succeeded',
        processor_key: ledger[0]!.idempotency_key,
        processor_refund_id: ledger[0]!.id,
        request_key: key,
        requested_by: w.admin.userId,
        reason: 'part of it',
        failure: null,
        requested_at: expect.any(String),
        settled_at: expect.any(String),
      },
    ]);
    const [row] = await sql<{ amount_minor: string; requested: boolean }>(
      'select amount_minor::text, requested_at <= settled_at as requested from refund_intents where subscription_id = ?',
      [id],
    );
    expect(row).toEqual({ amount_minor: '2000', requested: true });

    // The same request again is the same refund: no second intent, no second refund.
    const again = await refund(id, { amount: '20.00', reason: 'part of it' }, key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await intents(id)).body.data.items).toHaveLength(1);
    // A new request is a new intent under a key of its own.
    expect((await refund(id, { reason: 'the rest' })).body.data).toMatchObject({ amount_refunded: '50.00' });
    const both = (await intents(id)).body.data.items as { amount: string; status: string; processor_key: string }[];
    expect(both.map((i) => [i.amount, i.status])).toEqual([
      ['20.00', 'succeeded'],
      ['30.00', 'succeeded'],
    ]);
    expect(new Set(both.map((i) => i.processor_key)).size).toBe(2);
  });

  it('records a refund the processor refused as failed, and nothing moved', async () => {
    const { id, payment } = await voidedPaid();
    // The processor's side moved on without telling Tranche yet (a dispute opened at the card network).
    await sql(`update payment_sandbox_sessions set status = 'disputed' where id = ?`, [payment]);
    const refused = await refund(id, { amount: '10.00', reason: 'goodwill' });
    expect([refused.status, refused.body.error?.code]).toEqual([422, 'REFUND_REFUSED']);
    expect(await sql('select 1 from payment_sandbox_refunds where reference = ?', [payment])).toEqual([]);
    const [intent] = (await intents(id)).body.data.items;
    expect(intent).toMatchObject({
      amount: '10.00',
      status: 'failed',
      processor_refund_id: null,
      failure: expect.stringContaining('cannot be refunded'),
      settled_at: expect.any(String),
    });
    const after = (await w.api.get(`/issuance/subscriptions/${id}`, w.investor.token)).body.data;
    expect(after).toMatchObject({ amount_refunded: '0.00', payment_status: 'received' });
  });

  it('shows intents to staff of the organisation only', async () => {
    const { id } = await voidedPaid();
    expect((await intents(id, w.staff.token)).status).toBe(200);
    expect((await intents(id, w.investor.token)).status).toBe(403);
    const stranger = await actor(svc, newOrg(), ['admin']);
    expect((await intents(id, stranger.token)).status).toBe(404);
  });
});
