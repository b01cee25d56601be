import { randomUUID } from 'node:crypto';
import type { Role } from '../../domain/principal';
import { actor } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';

/**
 * Idempotency-Key on every state-changing POST (docs/decisions/0113-idempotency-key-every-post.md): the first
 * answer is replayed for the same key and body, another body is 409, and a command the workflow
 * did not answer in time (503) gets its real result when retried with the same key.
 */
const SUCCESS = 'https://investor.example/done';
const CANCEL = 'https://investor.example/cancelled';
const key = () => `key-${randomUUID()}`;
const withKey = (k: string) => ({ 'idempotency-key': k });

describe('Idempotency-Key on commands, Set A', () => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    // Short enough that a stopped worker turns a command into a 503 within the test.
    svc = await startService({ set: 'A', env: { COMMAND_TIMEOUT_MS: '10000' } });
    w = await lifecycleWorld(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  const path = (id: string, op: string) => `/issuance/subscriptions/${id}/${op}`;
  const eventsOf = async (id: string, type: string) => (await w.events(id)).filter((e) => e.type === type);

  it('replays a create for the same key and body, and refuses the key with another body', async () => {
    const k = key();
    const body = { securityClassId: w.offering.securityClassId, unitsSubscribed: 3 };
    const url = `/issuance/offerings/${w.offering.offeringId}/subscriptions`;
    const first = await w.api.post(url, w.investor.token, body, withKey(k));
    const again = await w.api.post(
      url,
      w.investor.token,
      { unitsSubscribed: 3, securityClassId: w.offering.securityClassId },
      withKey(k),
    );
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const other = await w.api.post(url, w.investor.token, { ...body, unitsSubscribed: 4 }, withKey(k));
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await eventsOf(first.body.data.id, 'subscription.created')).toHaveLength(1);
  });

  it('replays an investor command (sign) instead of refusing it as a second signature', async () => {
    const s = await w.create();
    const k = key();
    const body = { signature: 'Ada Lovelace', signedAt: '2026-11-21T10:00:00Z' };
    const first = await w.api.post(path(s.id, 'sign-agreement'), w.investor.token, body, withKey(k));
    const again = await w.api.post(path(s.id, 'sign-agreement'), w.investor.token, body, withKey(k));
    expect(first.status).toBe(200);
    expect(first.body.data.status).toBe('pending_payment');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const other = await w.api.post(
      path(s.id, 'sign-agreement'),
      w.investor.token,
      { ...body, signature: 'Someone Else' },
      withKey(k),
    );
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Without a key the same command is a new request, refused by the state machine.
    const fresh = await w.api.post(path(s.id, 'sign-agreement'), w.investor.token, body);
    expect(fresh.body.error.code).toBe('INVALID_TRANSITION');
    expect(await eventsOf(s.id, 'subscription.signed')).toHaveLength(1);
  });

  it('replays staff commands (approve, reconcile) and keeps a refusal as the answer to its key', async () => {
    const s = await w.inReviewByWire();
    const k = key();
    const approve = () => w.api.post(path(s.id, 'approve'), w.staff.token, {}, withKey(k));
    const [a, b] = [await approve(), await approve()];
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body).toEqual(a.body);
    // The key is the caller's: another staff member with the same key sends a new request.
    const colleague = await actor(svc, w.org, ['staff']);
    const theirs = await w.api.post(path(s.id, 'approve'), colleague.token, {}, withKey(k));
    expect(theirs.body.error.code).toBe('INVALID_TRANSITION');

    const rk = key();
    const reconcile = () =>
      w.api.post(
        '/issuance/reconciliations',
        w.staff.token,
        { referenceCode: s.reference_code, amount: s.total_amount },
        withKey(rk),
      );
    const [r1, r2] = [await reconcile(), await reconcile()];
    expect(r1.body.data).toMatchObject({ status: 'completed', payment_status: 'in_escrow' });
    expect(r2.status).toBe(200);
    expect(r2.body).toEqual(r1.body);
    expect(await eventsOf(s.id, 'subscription.completed')).toHaveLength(1);

    // A refusal is an answer too: the same key gets the same 409, not a fresh attempt.
    const rej = key();
    const reject1 = await w.api.post(path(s.id, 'reject'), w.staff.token, { reason: 'late' }, withKey(rej));
    const reject2 = await w.api.post(path(s.id, 'reject'), w.staff.token, { reason: 'late' }, withKey(rej));
    expect(reject1.status).toBe(409);
    expect(reject2.headers.get('idempotent-replayed')).toBe('true');
    expect(reject2.body).toEqual(reject1.body);
  });

  it('replays a setup session (Set A) with the same session_id, and refuses the key with another body', async () => {
    const s = await w.signed();
    const k = key();
    const body = { paymentMethod: 'card', successUrl: SUCCESS, cancelUrl: CANCEL };
    const open = (b: unknown) => w.api.post(path(s.id, 'create-setup-session'), w.investor.token, b, withKey(k));
    const first = await open(body);
    const again = await open({ cancelUrl: CANCEL, successUrl: SUCCESS, paymentMethod: 'card' });
    expect(first.status).toBe(200);
    expect(first.body.data.session_id).toEqual(expect.any(String));
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.session_id).toBe(first.body.data.session_id);
    const other = await open({ ...body, paymentMethod: 'us_bank_account' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Without a key the investor opens a new session: the key, not the state, made the replay.
    const fresh = await w.api.post(path(s.id, 'create-setup-session'), w.investor.token, body);
    expect(fresh.status).toBe(200);
    expect(fresh.body.data.session_id).not.toBe(first.body.data.session_id);
  });

  it('replays void (admin) and request-info (staff) once each, and refuses their keys with another reason', async () => {
    const signed = await w.signed();
    const vk = key();
    const voidIt = (reason: string) => w.api.post(path(signed.id, 'void'), w.admin.token, { reason }, withKey(vk));
    const [v1, v2] = [await voidIt('Signed by the wrong person'), await voidIt('Signed by the wrong person')];
    expect(v1.status).toBe(200);
    expect(v1.body.data.status).toBe('voided');
    expect(v2.headers.get('idempotent-replayed')).toBe('true');
    expect(v2.body).toEqual(v1.body);
    expect((await voidIt('Another reason')).body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await eventsOf(signed.id, 'subscription.voided')).toHaveLength(1);

    const inReview = await w.inReviewByWire();
    const ik = key();
    const ask = (reason: string) =>
      w.api.post(path(inReview.id, 'request-info'), w.staff.token, { reason }, withKey(ik));
    const [i1, i2] = [await ask('Proof of address, please'), await ask('Proof of address, please')];
    expect(i1.status).toBe(200);
    expect(i2.headers.get('idempotent-replayed')).toBe('true');
    expect(i2.body).toEqual(i1.body);
    expect((await ask('Something else')).body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await eventsOf(inReview.id, 'subscription.info_requested')).toHaveLength(1);
  });

  it('answers a concurrent duplicate with the first answer or 409 IDEMPOTENCY_KEY_IN_USE, and applies once', async () => {
    const s = await w.inReviewByWire();
    const k = key();
    const replies = await Promise.all(
      [1, 2, 3].map(() => w.api.post(path(s.id, 'approve'), w.staff.token, {}, withKey(k))),
    );
    for (const r of replies) {
      if (r.status === 409) expect(r.body.error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      else expect(r.body.data.status).toBe('approved');
    }
    expect(replies.some((r) => r.status === 200)).toBe(true);
    expect(await eventsOf(s.id, 'subscription.approved')).toHaveLength(1);
  });

  it('replays endpoint create, rotate and test with the same signing secret, stored sealed', async () => {
    const base = '/notifications/webhook-endpoints';
    const k = key();
    const body = { url: 'https://hooks.invalid/tranche', eventTypes: ['subscription.created'] };
    const first = await w.api.post(base, w.staff.token, body, withKey(k));
    const again = await w.api.post(base, w.staff.token, body, withKey(k));
    expect(first.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const list = await w.api.get(`${base}?limit=100`, w.staff.token);
    expect(list.body.data.items.filter((e: { id: string }) => e.id === first.body.data.id)).toHaveLength(1);

    const rk = key();
    const rotate = () =>
      w.api.post(`${base}/${first.body.data.id}/rotate-secret`, w.staff.token, undefined, withKey(rk));
    const [r1, r2] = [await rotate(), await rotate()];
    expect(r1.body.data.signing_secret).not.toBe(first.body.data.signing_secret);
    expect(r2.body.data.signing_secret).toBe(r1.body.data.signing_secret);
    const rows: { body_sealed: string }[] = await svc.orm.em
      .getConnection()
      .execute('select body_sealed from idempotency_keys where body_sealed is not null');
    expect(rows.some((r) => r.body_sealed.includes(r1.body.data.signing_secret))).toBe(false);

    const tk = key();
    const ping = () => w.api.post(`${base}/${first.body.data.id}/test`, w.staff.token, undefined, withKey(tk));
    const [t1, t2] = [await ping(), await ping()];
    expect(t1.status).toBe(202);
    expect(t2.body.data.event_id).toBe(t1.body.data.event_id);
  });

  it('checks the caller and its role before any replay, and replays a secret only to the same roles', async () => {
    const userId = `admin-${randomUUID()}`;
    const as = (roles: Role[]) => actor(svc, w.org, roles, { userId });
    const [admin, demoted, widened] = [await as(['admin']), await as(['staff']), await as(['admin', 'staff'])];
    const k = key();
    const issue = (token: string) => w.api.post('/identity/api-keys', token, { name: 'backend' }, withKey(k));
    const first = await issue(admin.token);
    expect(first.status).toBe(201);
    expect(first.headers.get('cache-control')).toBe('no-store');
    // The same user without the admin role: the role check answers, not the kept answer.
    const lost = await issue(demoted.token);
    expect([lost.status, lost.body.error?.code]).toEqual([403, 'ROLE_REQUIRED']);
    expect(JSON.stringify(lost.body)).not.toContain(first.body.data.key);
    // Still an admin, with another role besides: the answer that shows the key is not replayed.
    const other = await issue(widened.token);
    expect([other.status, other.body.error?.code]).toEqual([409, 'IDEMPOTENCY_KEY_ROLES_CHANGED']);
    expect(JSON.stringify(other.body)).not.toContain(first.body.data.key);
    const again = await issue(admin.token);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const keys = await w.api.get('/identity/api-keys', admin.token);
    expect(keys.body.data.filter((x: { created_by: string }) => x.created_by === userId)).toHaveLength(1);

    // Webhook secrets alike; an answer without a secret replays to the caller whatever roles it gained.
    const base = '/notifications/webhook-endpoints';
    const staff = await actor(svc, w.org, ['staff'], { userId: `staff-${randomUUID()}` });
    const staffAndAdmin = await actor(svc, w.org, ['staff', 'admin'], { userId: staff.userId });
    const rk = key();
    const register = (token: string) =>
      w.api.post(base, token, { url: 'https://hooks.invalid/roles', eventTypes: ['*'] }, withKey(rk));
    const registered = await register(staff.token);
    expect(registered.status).toBe(201);
    const refused = await register(staffAndAdmin.token);
    expect([refused.status, refused.body.error?.code]).toEqual([409, 'IDEMPOTENCY_KEY_ROLES_CHANGED']);
    expect(JSON.stringify(refused.body)).not.toContain(registered.body.data.signing_secret);
    expect((await register(staff.token)).body).toEqual(registered.body);
    const tk = key();
    const ping = (token: string) =>
      w.api.post(`${base}/${registered.body.data.id}/test`, token, undefined, withKey(tk));
    const pinged = await ping(staff.token);
    expect(pinged.status).toBe(202);
    const replayed = await ping(staffAndAdmin.token);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(pinged.body);
  });

  it('refuses a malformed key with 422 in the one envelope', async () => {
    const s = await w.create();
    const res = await w.api.post(path(s.id, 'request-signature'), w.investor.token, {}, withKey('has space'));
    expect(res.status).toBe(422);
    expect(res.body.error.details[0]).toMatchObject({ in: 'header', path: 'Idempotency-Key' });
  });

  it('answers 503 COMMAND_OUTCOME_UNKNOWN when no worker answers, and the retry with the same key gets the real result once', async () => {
    const s = await w.inReviewByWire();
    const k = key();
    const approve = () => w.api.post(path(s.id, 'approve'), w.staff.token, {}, withKey(k));
    await svc.stopWorker();
    let first;
    try {
      first = await approve();
    } finally {
      await svc.startWorker();
    }
    expect(first.status).toBe(503);
    expect(first.body.error.code).toBe('COMMAND_OUTCOME_UNKNOWN');
    expect(Number(first.headers.get('retry-after'))).toBeGreaterThan(0);
    // Retry as a client would, on the answer it observes (no sleeps), until the outcome is known.
    let retry = await approve();
    for (let i = 0; retry.status === 503 && i < 20; i++) retry = await approve();
    expect(retry.status).toBe(200);
    expect(retry.body.data.status).toBe('approved');
    expect(await eventsOf(s.id, 'subscription.approved')).toHaveLength(1);
    const replay = await approve();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(retry.body);
  });
});

describe('Idempotency-Key on commands, Set B', () => {
  let svc: TestService;
  let w: LifecycleWorld;
  beforeAll(async () => {
    svc = await startService({ set: 'B' });
    w = await lifecycleWorld(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  it('replays a checkout session with the same session_id, and refuses the key with another body', async () => {
    const s = await w.signed();
    const k = key();
    const url = `/issuance/subscriptions/${s.id}/create-checkout-session`;
    const body = { paymentMethod: 'card', successUrl: SUCCESS, cancelUrl: CANCEL };
    const first = await w.api.post(url, w.investor.token, body, withKey(k));
    const again = await w.api.post(url, w.investor.token, body, withKey(k));
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.session_id).toBe(first.body.data.session_id);
    expect(again.body).toEqual(first.body);
    const other = await w.api.post(
      url,
      w.investor.token,
      { ...body, successUrl: 'https://investor.example/elsewhere' },
      withKey(k),
    );
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});
