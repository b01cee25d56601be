import { actor } from '../support/fixtures';
import type { TestService } from '../support/service';
import type { LifecycleWorld } from '../support/subscriptions';
import { eventsOf, key, path, startCommandWorld, withKey } from './support/idempotency';

/** Idempotency-Key on subscription commands: replayed for the same key and body, refused for another, applied once. */
describe('Idempotency-Key on commands, Set A', () => {
  let svc: TestService;
  let w: LifecycleWorld;
  beforeAll(async () => {
    ({ svc, w } = await startCommandWorld('A'));
  }, 120_000);
  afterAll(() => svc?.stop());

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
    expect(await eventsOf(w, first.body.data.id, 'subscription.created')).toHaveLength(1);
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
    expect(await eventsOf(w, s.id, 'subscription.signed')).toHaveLength(1);
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
    expect(await eventsOf(w, s.id, 'subscription.completed')).toHaveLength(1);

    // A refusal is an answer too: the same key gets the same 409, not a fresh attempt.
    const rej = key();
    const reject1 = await w.api.post(path(s.id, 'reject'), w.staff.token, { reason: 'late' }, withKey(rej));
    const reject2 = await w.api.post(path(s.id, 'reject'), w.staff.token, { reason: 'late' }, withKey(rej));
    expect(reject1.status).toBe(409);
    expect(reject2.headers.get('idempotent-replayed')).toBe('true');
    expect(reject2.body).toEqual(reject1.body);
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
    expect(await eventsOf(w, signed.id, 'subscription.voided')).toHaveLength(1);

    const inReview = await w.inReviewByWire();
    const ik = key();
    const ask = (reason: string) =>
      w.api.post(path(inReview.id, 'request-info'), w.staff.token, { reason }, withKey(ik));
    const [i1, i2] = [await ask('Proof of address, please'), await ask('Proof of address, please')];
    expect(i1.status).toBe(200);
    expect(i2.headers.get('idempotent-replayed')).toBe('true');
    expect(i2.body).toEqual(i1.body);
    expect((await ask('Something else')).body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await eventsOf(w, inReview.id, 'subscription.info_requested')).toHaveLength(1);
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
    expect(await eventsOf(w, s.id, 'subscription.approved')).toHaveLength(1);
  });

  it('refuses a malformed key with 422 in the one envelope', async () => {
    const s = await w.create();
    const res = await w.api.post(path(s.id, 'request-signature'), w.investor.token, {}, withKey('has space'));
    expect(res.status).toBe(422);
    expect(res.body.error.details[0]).toMatchObject({ in: 'header', path: 'Idempotency-Key' });
  });
});
