import { execFile } from 'node:child_process';
import { Client as PgClient } from 'pg';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { appendAuditEvent, GENESIS_HASH, verifyAuditChain, type AuditRow } from '../../db/audit-log';
import { exchange, notifyAsProvider, PROVIDER_SECRET } from '../identity/support/identity';
import { postSandboxEvent } from '../payments/payment-helpers';
import { resealWebhookSecrets } from '../../scripts/webhook-secrets';
import { secretBoxFrom } from '../../webhooks/secret-box';
import { actor, consoleToken, newOrg, type Actor } from '../support/fixtures';
import { ownerUrlOf, startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const [k1, k2] = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')];

/**
 * The audit trail (docs/decisions/0204-audit-one-table-one-chain-per-organisation.md): every audited action,
 * once in each behaviour set, leaves exactly one entry with its actor and outcome; a refusal is recorded as
 * refused; a rolled-back change leaves none; the organisation's hash chain verifies, and an edited row breaks
 * it and is named.
 */
describe.each(['A', 'B'] as const)('Set %s: the audit trail', (set) => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    svc = await startService({
      set,
      env: {
        IDENTITY_PROVIDER_WEBHOOK_SECRET: PROVIDER_SECRET,
        WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
        DEV_IDP_ENABLED: 'true',
        WEBHOOK_SECRET_KEYS: `k1:${k1}`,
      },
      auditCheckpoints: true,
    });
    w = await lifecycleWorld(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  const sql = () => svc.orm.em.getConnection();
  const hooks = () => `/notifications${set === 'A' ? '/webhook-endpoints' : '/webhooks'}`;
  const entries = (where: { action?: string; subject?: string; org?: string } = {}): Promise<AuditRow[]> =>
    sql().execute(
      `select * from audit_events where org_id = ? and (?::text is null or action = ?)
        and (?::text is null or subject_id = ?) order by seq`,
      [where.org ?? w.org, where.action ?? null, where.action ?? null, where.subject ?? null, where.subject ?? null],
    );
  /** The one entry of this action on this subject, by this actor, with this outcome. */
  async function one(action: string, subject: string, by: Actor, outcome: 'succeeded' | string = 'succeeded') {
    const found = await entries({ subject });
    expect(found.map((e) => [e.action, e.outcome, e.error_code])).toContainEqual([
      action,
      outcome === 'succeeded' ? 'succeeded' : 'refused',
      outcome === 'succeeded' ? null : outcome,
    ]);
    const matching = found.filter((e) => e.action === action);
    expect(matching).toHaveLength(1);
    const e = matching[0]!;
    expect(e.actor_user_id).toBe(by.userId);
    expect(e.org_id).toBe(by.orgId);
    return e;
  }
  const expectOk = (res: { status: number; body: any }, status = 200) => {
    if (res.status !== status) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };

  it('records API keys issued and revoked, with the admin, the request id, the address and the key acted through', async () => {
    const issued = await w.api.post('/identity/api-keys', w.admin.token, { name: 'backend' });
    const key = expectOk(issued, 201);
    const e = await one('api_key.issue', key.id, w.admin);
    expect(e).toMatchObject({ outcome: 'succeeded', actor_roles: ['admin'], subject_type: 'api_key' });
    expect(e.request_id).toBe(issued.headers.get('x-request-id'));
    expect(e.client_address).toMatch(/127\.0\.0\.1/);
    expect(JSON.stringify(e.after)).not.toContain(key.key.slice(-64));

    // Through a token exchanged with that key, the entry names the key.
    const idToken = expectOk(
      await w.api.post('/dev-idp/mint', undefined, {
        user_id: 'ada',
        org_id: w.org,
        roles: ['admin'],
        api_key: false,
      }),
    ).id_token;
    const viaKey = expectOk(await exchange(svc, key.key, idToken)).access_token as string;
    const second = expectOk(await w.api.post('/identity/api-keys', viaKey, { name: 'second' }), 201);
    expect(
      (await one('api_key.issue', second.id, { userId: 'ada', orgId: w.org, token: viaKey })).actor_api_key_id,
    ).toBe(key.id);

    expect((await w.api.delete(`/identity/api-keys/${second.id}`, w.admin.token)).status).toBe(204);
    const revoked = await one('api_key.revoke', second.id, w.admin);
    expect(revoked.before).toEqual({ revoked_at: null });
    expect(revoked.after).toEqual({ revoked_at: expect.any(String) });

    const missing = '6f1c7c59-7f57-4b8e-9a43-5d0c0f6c1f11';
    expect((await w.api.delete(`/identity/api-keys/${missing}`, w.admin.token)).status).toBe(404);
    await one('api_key.revoke', missing, w.admin, 'NOT_FOUND');
  });

  it('records webhook endpoints created, changed, disabled, re-enabled, re-subscribed, rotated and deleted', async () => {
    const ep = expectOk(
      await w.api.post(hooks(), w.staff.token, {
        url: 'http://127.0.0.1:9/hook',
        eventTypes: ['subscription.created'],
      }),
      201,
    );
    expect((await one('webhook_endpoint.create', ep.id, w.staff)).after).toMatchObject({
      url: 'http://127.0.0.1:9/hook',
      status: 'enabled',
    });
    expectOk(await w.api.patch(`${hooks()}/${ep.id}`, w.staff.token, { description: 'ops' }));
    await one('webhook_endpoint.update', ep.id, w.staff);
    expectOk(await w.api.patch(`${hooks()}/${ep.id}`, w.staff.token, { status: 'disabled' }));
    const disabled = await one('webhook_endpoint.disable', ep.id, w.staff);
    expect([disabled.before?.status, disabled.after?.status]).toEqual(['enabled', 'disabled']);
    expectOk(await w.api.patch(`${hooks()}/${ep.id}`, w.staff.token, { status: 'enabled' }));
    await one('webhook_endpoint.enable', ep.id, w.staff);
    expectOk(await w.api.put(`${hooks()}/${ep.id}/subscriptions`, w.staff.token, { eventTypes: ['*'] }));
    expect((await one('webhook_endpoint.set_event_types', ep.id, w.staff)).after).toEqual({ event_types: ['*'] });
    const rotated = expectOk(await w.api.post(`${hooks()}/${ep.id}/rotate-secret`, w.staff.token));
    const rotation = await one('webhook_endpoint.rotate_secret', ep.id, w.staff);
    expect(JSON.stringify(rotation)).not.toContain(rotated.signing_secret);
    expect((await w.api.delete(`${hooks()}/${ep.id}`, w.staff.token)).status).toBe(204);
    await one('webhook_endpoint.delete', ep.id, w.staff);

    // Deleted: a further change is refused, and recorded as refused.
    expect((await w.api.patch(`${hooks()}/${ep.id}`, w.staff.token, { description: 'x' })).status).toBe(404);
    const refused = (await entries({ subject: ep.id })).filter((e) => e.outcome === 'refused');
    expect(refused.map((e) => [e.action, e.error_code])).toEqual([['webhook_endpoint.update', 'NOT_FOUND']]);
  });

  it('records staff decisions on KYC and accreditations, and refuses (and records) a staff member deciding their own', async () => {
    const investor = await actor(svc, w.org, ['investor']);
    const kyc = expectOk(await w.api.post('/identity/kyc', investor.token), 201);
    const kycId = set === 'A' ? kyc.kyc_case_id : kyc.session_id;
    if (set === 'B') expectOk(await notifyAsProvider(svc, { kind: 'kyc', id: kycId, action: 'processing' }));
    expectOk(await w.api.post(`/identity/kyc/${kycId}/decisions`, w.staff.token, { action: 'approve' }));
    expect((await one('kyc.approve', kycId, w.staff)).after).toEqual({ status: 'approved' });
    // Starting one's own KYC is not a staff decision: not in the trail.
    expect(await entries({ action: 'kyc.start' })).toEqual([]);

    const a = expectOk(await w.api.post('/identity/accreditations', investor.token, { method: 'income' }), 201);
    if (set === 'B') expectOk(await w.api.post(`/identity/accreditations/${a.id}/submit`, investor.token));
    expectOk(
      await w.api.post(`/identity/accreditations/${a.id}/decisions`, w.staff.token, {
        action: 'approve',
        reason: 'ok',
      }),
    );
    expect((await one('accreditation.approve', a.id, w.staff)).after).toEqual({ status: 'approved', reason: 'ok' });

    const both = await actor(svc, w.org, ['investor', 'staff']);
    const own = expectOk(await w.api.post('/identity/kyc', both.token), 201);
    const ownId = set === 'A' ? own.kyc_case_id : own.session_id;
    if (set === 'B') expectOk(await notifyAsProvider(svc, { kind: 'kyc', id: ownId, action: 'processing' }));
    expect((await w.api.post(`/identity/kyc/${ownId}/decisions`, both.token, { action: 'approve' })).status).toBe(403);
    expect(await one('kyc.approve', ownId, both, 'OWN_KYC')).toMatchObject({ after: null });
    const ownA = expectOk(await w.api.post('/identity/accreditations', both.token, { method: 'income' }), 201);
    if (set === 'B') expectOk(await w.api.post(`/identity/accreditations/${ownA.id}/submit`, both.token));
    const refused = await w.api.post(`/identity/accreditations/${ownA.id}/decisions`, both.token, {
      action: 'approve',
    });
    expect(refused.status).toBe(403);
    await one('accreditation.approve', ownA.id, both, 'OWN_ACCREDITATION');
  });

  /** Set B: paid by card on the sandbox's checkout page, then waiting for review. */
  async function inReviewByCard() {
    const s = await w.signed();
    const checkout = expectOk(
      await w.api.post(`/issuance/subscriptions/${s.id}/create-checkout-session`, w.investor.token, {
        paymentMethod: 'card',
        successUrl: 'http://localhost:9/ok',
        cancelUrl: 'http://localhost:9/no',
      }),
    );
    const paid = await fetch(`${checkout.session_url}/complete`, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const now = expectOk(await w.api.get(`/issuance/subscriptions/${s.id}`, w.investor.token));
      if (now.status === 'pending_review') return now as Record<string, any>;
      await new Promise((r) => setTimeout(r, 150));
    }
    throw new Error('never reached pending_review');
  }
  const inReview = () => (set === 'A' ? w.inReviewByWire() : inReviewByCard());

  it('records staff decisions on subscriptions with the status before and after, refusals included', async () => {
    const draft = await w.create();
    expect((await w.post(draft.id, 'approve', w.staff)).status).toBe(409);
    expect(await one('subscription.approve', draft.id, w.staff, 'INVALID_TRANSITION')).toMatchObject({
      before: { status: 'draft' },
      after: null,
    });

    const signed = await w.signed();
    // Refused at the door (auth(): the route needs a role the caller lacks): no decision was made, no entry.
    expect((await w.post(signed.id, 'void', w.staff, { reason: 'duplicate' })).status).toBe(403);
    expectOk(await w.post(signed.id, 'void', w.admin, { reason: 'Signed by the wrong person' }));
    expect((await one('subscription.void', signed.id, w.admin)).after).toEqual({ status: 'voided' });

    const reviewed = await inReview();
    expectOk(await w.post(reviewed.id, 'request-info', w.staff, { reason: 'proof of address' }));
    await one('subscription.request_info', reviewed.id, w.staff);
    expectOk(await w.post(reviewed.id, 'approve', w.staff));
    const approved = await one('subscription.approve', reviewed.id, w.staff);
    expect([approved.before, approved.after]).toEqual([{ status: 'pending_review' }, { status: 'approved' }]);
    if (set === 'A') {
      expectOk(
        await w.api.post('/issuance/reconciliations', w.staff.token, {
          referenceCode: reviewed.reference_code,
          amount: reviewed.total_amount,
        }),
      );
      expect((await one('subscription.reconcile', reviewed.id, w.staff)).after).toEqual({ status: 'completed' });
      // A reference code that names nothing: refused, and the entry names the code.
      const unknown = await w.api.post('/issuance/reconciliations', w.staff.token, {
        referenceCode: 'TRN-ZZZZ-ZZZZ-ZZZ',
        amount: '1.00',
      });
      expect(unknown.status).toBeGreaterThanOrEqual(400);
      const refusedReconcile = await one(
        'subscription.reconcile',
        'TRN-ZZZZ-ZZZZ-ZZZ',
        w.staff,
        unknown.body.error.code,
      );
      expect(refusedReconcile.subject_type).toBe('reference_code');
    } else {
      expectOk(await w.post(reviewed.id, 'issue-shares', w.staff));
      expect((await one('subscription.issue_shares', reviewed.id, w.staff)).after).toEqual({ status: 'completed' });
    }

    const rejected = await inReview();
    expectOk(await w.post(rejected.id, 'reject', w.staff, { reason: 'sanctions list' }));
    expect((await one('subscription.reject', rejected.id, w.staff)).after).toEqual({ status: 'rejected' });
  });

  /** Entries written by a workflow's activity land a little after the request that caused them. */
  async function eventuallyOne(
    action: string,
    subject: string,
    by: Actor,
    outcome: 'succeeded' | string = 'succeeded',
  ) {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && !(await entries({ subject })).some((e) => e.action === action))
      await new Promise((r) => setTimeout(r, 150));
    return one(action, subject, by, outcome);
  }

  it('records held payments, refunds and disputes, with the processor as the actor and the notification request', async () => {
    const s = await w.signed();
    expectOk(await w.post(s.id, 'void', w.admin, { reason: 'Signed by the wrong person' }));
    const processor = { userId: 'processor:sandbox', orgId: w.org, token: '' };
    const notify = async (event: string, type: string) =>
      expect(
        (
          await postSandboxEvent(svc, `${event}_${s.id}`, type, {
            subscription_id: s.id,
            reference: `late-${s.id}`,
            amount: s.total_amount,
            currency: 'USD',
          })
        ).status,
      ).toBe(200);

    // Money that still arrives for a voided subscription is held for staff to refund.
    await notify('evt_late', 'payment.succeeded');
    const held = await eventuallyOne('payment.hold', s.id, processor);
    expect(held).toMatchObject({
      subject_type: 'subscription',
      actor_roles: ['system'],
      actor_api_key_id: null,
      actor_session: null,
      before: { payment_status: 'pending' },
      after: { payment_status: 'received', amount: s.total_amount, reason: expect.stringMatching(/held/) },
    });
    expect(held.client_address).toMatch(/127\.0\.0\.1/);
    expect(held.request_id).toEqual(expect.any(String));
    await notify('evt_refund', 'payment.refunded');
    const refund = await eventuallyOne('payment.refund', s.id, processor);
    expect([refund.before, refund.after]).toEqual([
      { payment_status: 'received' },
      expect.objectContaining({ payment_status: 'refunded' }),
    ]);
    await notify('evt_dispute', 'payment.disputed');
    expect((await eventuallyOne('payment.dispute', s.id, processor)).after).toMatchObject({
      payment_status: 'disputed',
    });
    // The same notification told again changes nothing, and adds no entry.
    await notify('evt_dispute', 'payment.disputed');
    await new Promise((r) => setTimeout(r, 1000));
    await one('payment.dispute', s.id, processor);
  });

  /** A subscription a processor's payment applies to: Set A approved (paid by wire), Set B signed and awaiting payment. */
  async function awaitingPayment() {
    if (set === 'B') return w.signed();
    const s = await w.inReviewByWire();
    expectOk(await w.post(s.id, 'approve', w.staff));
    return s;
  }
  const paid = (s: Record<string, any>, event: string, reference: string, amount: string) =>
    postSandboxEvent(svc, `${event}_${s.id}`, 'payment.succeeded', {
      subscription_id: s.id,
      reference,
      amount,
      currency: 'USD',
    }).then((res) => expect(res.status).toBe(200));

  it('records a second payment, once the total is paid, held with the processor as the actor', async () => {
    const s = await awaitingPayment();
    const processor = { userId: 'processor:sandbox', orgId: w.org, token: '' };
    await paid(s, 'evt_first', `first-${s.id}`, s.total_amount);
    const deadline = Date.now() + 30_000;
    const paymentStatus = async () =>
      expectOk(await w.api.get(`/issuance/subscriptions/${s.id}`, w.investor.token)).payment_status;
    while (Date.now() < deadline && (await paymentStatus()) !== 'received')
      await new Promise((r) => setTimeout(r, 150));
    await paid(s, 'evt_second', `second-${s.id}`, s.total_amount);
    const held = await eventuallyOne('payment.hold', s.id, processor);
    expect(held).toMatchObject({
      subject_type: 'subscription',
      actor_roles: ['system'],
      actor_api_key_id: null,
      actor_session: null,
      after: { reference: `second-${s.id}`, reason: expect.stringMatching(/second payment/) },
    });
    // The same second payment told again is held once: still one entry.
    await paid(s, 'evt_second_again', `second-${s.id}`, s.total_amount);
    await new Promise((r) => setTimeout(r, 1000));
    await one('payment.hold', s.id, processor);
  });

  it('records a payment of another amount than the total, held with the processor as the actor', async () => {
    const s = await awaitingPayment();
    const processor = { userId: 'processor:sandbox', orgId: w.org, token: '' };
    await paid(s, 'evt_short', `short-${s.id}`, '1.00');
    const held = await eventuallyOne('payment.hold', s.id, processor);
    expect(held).toMatchObject({
      subject_type: 'subscription',
      actor_roles: ['system'],
      actor_api_key_id: null,
      actor_session: null,
      after: { amount: '1.00', reference: `short-${s.id}`, reason: expect.stringMatching(/but the total is/) },
    });
    expect(held.client_address).toMatch(/127\.0\.0\.1/);
  });

  it('records bulk webhook recoveries started and cancelled, refusals included', async () => {
    const ep = expectOk(
      await w.api.post(hooks(), w.staff.token, { url: 'http://127.0.0.1:9/recover', eventTypes: ['*'] }),
      201,
    );
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const started = expectOk(await w.api.post(`${hooks()}/${ep.id}/recoveries`, w.staff.token, { since }), 202);
    expect((await one('webhook_recovery.start', started.id, w.staff)).after).toMatchObject({
      endpoint_id: ep.id,
      since,
    });

    // One running (inserted here so it is still running when cancelled): cancelled, then refused as finished.
    const running = '0b5f3c1e-4d2a-4c8e-9f10-2a6e1d7c3b51';
    await sql().execute(
      `update webhook_recoveries set status = 'completed', finished_at = now() where endpoint_id = ? and status = 'running'`,
      [ep.id],
    );
    await sql().execute(
      `insert into webhook_recoveries (id, org_id, endpoint_id, since, until, total) values (?, ?, ?, now() - interval '1 hour', now(), 0)`,
      [running, w.org, ep.id],
    );
    expectOk(await w.api.delete(`${hooks()}/${ep.id}/recoveries/${running}`, w.staff.token), 202);
    expect((await one('webhook_recovery.cancel', running, w.staff)).after).toMatchObject({
      cancel_requested_at: expect.any(String),
    });
    await sql().execute(`update webhook_recoveries set status = 'cancelled', finished_at = now() where id = ?`, [
      running,
    ]);
    expect((await w.api.delete(`${hooks()}/${ep.id}/recoveries/${running}`, w.staff.token)).status).toBe(409);
    const refusedCancel = (await entries({ subject: running })).filter((e) => e.outcome === 'refused');
    expect(refusedCancel.map((e) => [e.action, e.error_code])).toEqual([
      ['webhook_recovery.cancel', 'RECOVERY_FINISHED'],
    ]);

    // A disabled endpoint's recovery is refused, and recorded against the endpoint.
    expectOk(await w.api.patch(`${hooks()}/${ep.id}`, w.staff.token, { status: 'disabled' }));
    expect((await w.api.post(`${hooks()}/${ep.id}/recoveries`, w.staff.token, { since })).status).toBe(409);
    await one('webhook_recovery.start', ep.id, w.staff, 'ENDPOINT_DISABLED');
  });

  it('records a manual redelivery of one delivery with its status, and a refused one (a success) as refused', async () => {
    const deliveries = `/notifications${set === 'A' ? '/webhook-deliveries' : '/deliveries'}`;
    const ep = expectOk(
      await w.api.post(hooks(), w.staff.token, { url: 'http://127.0.0.1:9/redeliver', eventTypes: ['*'] }),
      201,
    );
    const { delivery_id } = expectOk(await w.api.post(`${hooks()}/${ep.id}/test`, w.staff.token), 202);
    // Nothing listens on port 9: the first attempt fails and the delivery waits on its schedule.
    const deadline = Date.now() + 30_000;
    const statusOf = async () => expectOk(await w.api.get(`${deliveries}/${delivery_id}`, w.staff.token)).status;
    while (Date.now() < deadline && (await statusOf()) !== 'failed') await new Promise((r) => setTimeout(r, 150));
    expect(await statusOf()).toBe('failed');

    expectOk(await w.api.post(`${deliveries}/${delivery_id}/retry`, w.staff.token), 202);
    const retried = await one('webhook_delivery.retry', delivery_id, w.staff);
    expect(retried).toMatchObject({
      subject_type: 'webhook_delivery',
      actor_roles: ['staff'],
      before: { status: 'failed' },
      after: { status: 'failed', retry: 'requested' },
    });

    // A success has nothing to retry: refused, and recorded as refused beside the one that succeeded.
    await sql().execute(`update webhook_deliveries set status = 'success' where id = ?`, [delivery_id]);
    const refused = await w.api.post(`${deliveries}/${delivery_id}/retry`, w.staff.token);
    expect(refused.status).toBe(409);
    const all = (await entries({ subject: delivery_id })).filter((e) => e.action === 'webhook_delivery.retry');
    expect(all.map((e) => [e.outcome, e.error_code, e.before, e.after])).toEqual([
      ['succeeded', null, { status: 'failed' }, { status: 'failed', retry: 'requested' }],
      ['refused', 'DELIVERY_SUCCEEDED', { status: 'success' }, null],
    ]);
    expect(all[1]!.actor_user_id).toBe(w.staff.userId);
  });

  it('records each endpoint whose signing secrets a reseal moved to the new key, with the system as actor', async () => {
    const ep = expectOk(
      await w.api.post(hooks(), w.staff.token, { url: 'http://127.0.0.1:9/reseal', eventTypes: ['*'] }),
      201,
    );
    const rotated = secretBoxFrom({
      ...svc.config,
      WEBHOOK_SECRET_KEYS: [
        { id: 'k2', key: Buffer.from(k2, 'base64') },
        { id: 'k1', key: Buffer.from(k1, 'base64') },
      ],
    });
    await resealWebhookSecrets(svc.orm, rotated);
    const resealed = await one('webhook_endpoint.reseal_secret', ep.id, { userId: 'system', orgId: w.org, token: '' });
    expect(resealed).toMatchObject({
      actor_roles: ['system'],
      actor_session: 'cli:webhook-secrets',
      before: { secret_key_ids: ['k1'] },
      after: { secret_key_ids: ['k2'] },
    });
    // Run again: nothing left under the old key, no new entry.
    await resealWebhookSecrets(svc.orm, rotated);
    await one('webhook_endpoint.reseal_secret', ep.id, { userId: 'system', orgId: w.org, token: '' });
  });

  it('records console sign-ins and sign-outs, and names the console session in what staff do through it', async () => {
    const get = (url: string, cookie?: string) =>
      fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {}, signal: AbortSignal.timeout(30_000) });
    const start = await get(`${svc.baseUrl}/console/auth/start`);
    const pending = start.headers.get('set-cookie')!.split(';')[0]!;
    const asked = new URL(start.headers.get('location')!).searchParams;
    const form = new URLSearchParams({ ...Object.fromEntries(asked), user_id: 'console-reviewer', org_id: w.org });
    form.set('roles', 'staff');
    const authorized = await fetch(`${svc.baseUrl}/dev-idp/authorize`, {
      method: 'POST',
      body: form,
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    const back = new URL(authorized.headers.get('location')!);
    const signedIn = await get(`${svc.baseUrl}/console/auth/callback${back.search}`, pending);
    expect(signedIn.status).toBe(302);
    const session = signedIn.headers
      .getSetCookie()
      .find((c) => c.startsWith('tranche_console='))!
      .split(';')[0]!;
    const reviewer = { userId: 'console-reviewer', orgId: w.org, token: '' };
    const signIn = (await entries({ action: 'console.sign_in' })).filter((e) => e.actor_user_id === reviewer.userId);
    expect(signIn).toHaveLength(1);
    expect(signIn[0]!.actor_session).toEqual(expect.any(String));
    expect(signIn[0]!.subject_id).toBe(signIn[0]!.actor_session);

    const s = await inReview();
    const approved = await fetch(`${svc.baseUrl}/console/subscriptions/${s.id}/approve`, {
      method: 'POST',
      headers: { cookie: session, origin: svc.baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'from=queue',
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(approved.status).toBeLessThan(400);
    expect((await one('subscription.approve', s.id, reviewer)).actor_session).toBe(signIn[0]!.actor_session);

    const out = await fetch(`${svc.baseUrl}/console/auth/sign-out`, {
      method: 'POST',
      headers: { cookie: session, origin: svc.baseUrl },
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(out.status).toBe(303);
    expect((await one('console.sign_out', signIn[0]!.actor_session!, reviewer)).actor_roles).toEqual(['staff']);
  });

  it('chains entries written at the same time by concurrent requests', async () => {
    const admin = await actor(svc, newOrg(), ['admin']);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => w.api.post('/identity/api-keys', admin.token, { name: `burst-${i}` })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(201));
    const rows = await entries({ org: admin.orgId });
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 12 }, (_, i) => String(i + 1)));
    expect(await verifyAuditChain(sql().getKnex(), admin.orgId)).toEqual({ ok: true, checked: 12 });
  });

  it('leaves no entry for a change that rolled back, and the chain goes on without a gap', async () => {
    const org = newOrg();
    const before = await entries({ org });
    await expect(
      svc.orm.em.fork().transactional(async (em) => {
        await appendAuditEvent(em.getTransactionContext()!, {
          orgId: org,
          actor: { userId: 'u', roles: ['admin'], apiKeyId: null, session: null, clientAddress: null, requestId: null },
          action: 'api_key.issue',
          subject: { type: 'api_key', id: 'rolled-back' },
          result: { outcome: 'succeeded' },
        });
        throw new Error('the change failed after its entry was written');
      }),
    ).rejects.toThrow('the change failed');
    expect(await entries({ org })).toEqual(before);
    expect(before).toEqual([]);
    // The next entry that commits is the chain's first: nothing of the rolled-back one is left to link to.
    const next = await appendAuditEvent(sql().getKnex(), {
      orgId: org,
      actor: { userId: 'u', roles: ['admin'], apiKeyId: null, session: null, clientAddress: null, requestId: null },
      action: 'api_key.issue',
      subject: { type: 'api_key', id: 'committed' },
      result: { outcome: 'succeeded' },
    });
    expect([next.seq, next.prev_hash]).toEqual(['1', GENESIS_HASH]);
    expect(await verifyAuditChain(sql().getKnex(), org)).toEqual({ ok: true, checked: 1 });
  });

  it('serves the trail to admins only, scoped to their organisation, filtered and cursor-paged, and as CSV', async () => {
    expect((await w.api.get('/audit/events', w.staff.token)).status).toBe(403);
    const stranger = await actor(svc, newOrg(), ['admin']);
    expect(expectOk(await w.api.get('/audit/events', stranger.token)).items).toEqual([]);

    const all = (await entries()).reverse();
    const first = expectOk(await w.api.get('/audit/events?limit=2', w.admin.token));
    expect(first.items.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));
    const next = expectOk(await w.api.get(`/audit/events?limit=2&cursor=${first.next_cursor}`, w.admin.token));
    expect(next.items.map((e: { id: string }) => e.id)).toEqual(all.slice(2, 4).map((e) => e.id));
    expect((await w.api.get('/audit/events?cursor=nonsense', w.admin.token)).status).toBe(400);

    const byAction = expectOk(await w.api.get('/audit/events?action=webhook_endpoint.*', w.admin.token)).items;
    expect(byAction.length).toBeGreaterThanOrEqual(7);
    expect(byAction.every((e: { action: string }) => e.action.startsWith('webhook_endpoint.'))).toBe(true);
    const byActor = expectOk(await w.api.get(`/audit/events?actor=${w.admin.userId}`, w.admin.token)).items;
    expect(byActor.length).toBeGreaterThan(0);
    expect(byActor.every((e: { actor: { user_id: string } }) => e.actor.user_id === w.admin.userId)).toBe(true);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(expectOk(await w.api.get(`/audit/events?from=${future}`, w.admin.token)).items).toEqual([]);
    const refused = expectOk(await w.api.get('/audit/events?outcome=refused&limit=200', w.admin.token)).items;
    expect(refused.map((e: { error_code: string }) => e.error_code)).toContain('INVALID_TRANSITION');

    const csv = await fetch(`${svc.baseUrl}/audit/events.csv?action=api_key.*`, {
      headers: { authorization: `Bearer ${w.admin.token}` },
    });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toMatch(/^seq,occurred_at,actor_user_id,/);
    expect(lines.slice(1).every((l) => l.includes(',api_key.'))).toBe(true);
    expect(lines).toHaveLength(1 + (await entries()).filter((e) => e.action.startsWith('api_key.')).length);
  });

  it('shows the trail on a console page to admins, filtered and paged, and the refusal to other staff', async () => {
    const page = async (who: Actor, query = '') => {
      const res = await fetch(`${svc.baseUrl}/console/audit${query}`, {
        headers: { cookie: `tranche_console=${await consoleToken(svc, who, who === w.admin ? ['admin'] : ['staff'])}` },
        redirect: 'manual',
        signal: AbortSignal.timeout(30_000),
      });
      return { status: res.status, text: await res.text() };
    };
    // More than a page (50) of entries, so the page links to older ones.
    for (let n = (await entries()).length; n <= 50; n += 1)
      expectOk(await w.api.post('/identity/api-keys', w.admin.token, { name: `page-${n}` }), 201);
    const keys = (await entries()).filter((e) => e.action.startsWith('api_key.')).slice(-50);
    const shown = await page(w.admin, '?action=api_key.*');
    expect(shown.status).toBe(200);
    for (const e of keys) expect(shown.text).toContain(`data-testid="audit-${e.id}"`);
    expect(shown.text).not.toContain('webhook_endpoint.');
    const older = /href="\/console\/audit\?([^"]+)" data-testid="next"/.exec((await page(w.admin)).text);
    expect(older?.[1]).toContain('cursor=');
    expect((await page(w.admin, `?${older![1]!.replaceAll('&amp;', '&')}`)).text).toContain(
      'data-testid="audit-events"',
    );
    const staff = await page(w.staff);
    expect(staff.text).toContain('ROLE_REQUIRED');
    expect(staff.text).not.toContain('data-testid="audit-events"');
  });

  it('verifies the chain, refuses edits, and names the first entry an edit broke', async () => {
    const verify = (org: string) =>
      run('npm', ['run', '-s', 'audit:verify', '--', '--org', org], {
        cwd: root,
        env: {
          ...process.env,
          DATABASE_URL: svc.config.DATABASE_URL,
          TEMPORAL_TASK_QUEUE: svc.config.TEMPORAL_TASK_QUEUE,
          LOG_LEVEL: 'silent',
        },
        timeout: 60_000,
      });
    for (const name of ['chain-1', 'chain-2', 'chain-3'])
      expectOk(await w.api.post('/identity/api-keys', w.admin.token, { name }), 201);
    const rows = await entries();
    expect(await verifyAuditChain(sql().getKnex(), w.org)).toEqual({ ok: true, checked: rows.length });
    expect((await verify(w.org)).stdout).toContain(`${rows.length} entries, chain holds`);

    const victim = rows[Math.floor(rows.length / 2)]!;
    // The services' role may not change an entry at all; the owner meets the trigger.
    await expect(sql().execute(`update audit_events set after = null where id = ?`, [victim.id])).rejects.toThrow(
      /permission denied/,
    );
    const owner = new PgClient({ connectionString: ownerUrlOf(svc.config.DATABASE_URL) });
    await owner.connect();
    try {
      await expect(owner.query(`delete from audit_events where id = $1`, [victim.id])).rejects.toThrow(/append-only/);
      // Someone with the table owner's rights edits a row behind the trigger's back.
      await owner.query(`alter table audit_events disable trigger audit_events_append_only`);
      await owner.query(`update audit_events set after = '{"status":"tampered"}' where id = $1`, [victim.id]);
      await owner.query(`alter table audit_events enable trigger audit_events_append_only`);
    } finally {
      await owner.end();
    }
    const failed = await verify(w.org).then(
      () => null,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(`broken at entry ${victim.seq} (id ${victim.id})`);
  });
});
