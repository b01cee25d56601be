import { randomUUID } from 'node:crypto';
import type { BehaviourSet } from '../../lib/behaviour-set';
import { actor } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { PATHS } from '../webhooks/support/hooks';
import { signedSubscription, world, type World } from './payment-helpers';

/**
 * Tranche's own routes that move money take a command only under an Idempotency-Key, so a retry
 * or a double submit cannot move it twice; the spec's routes keep working without one, and honour
 * one when sent (docs/decisions/0373-idempotency-key-required-where-money-moves.md).
 */
describe.each(['A', 'B'] as BehaviourSet[])('Idempotency-Key on money and secret routes, Set %s', (set) => {
  let svc: TestService;
  let w: World;

  beforeAll(async () => {
    svc = await startService({ set });
    w = await world(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  const required = (res: { status: number; body: any }) =>
    expect([res.status, res.body.error?.code, res.body.error?.details]).toEqual([
      400,
      'IDEMPOTENCY_KEY_REQUIRED',
      { header: 'Idempotency-Key' },
    ]);

  it('refuses a refund without an Idempotency-Key, before anything is read or moved', async () => {
    const id = await signedSubscription(w, 2);
    const res = await w.api.post(`/issuance/subscriptions/${id}/refund`, w.admin.token, { reason: 'no key' });
    required(res);
    expect(res.body.error.message).toContain('Idempotency-Key');
    // An empty header is no key either.
    required(
      await w.api.post(
        `/issuance/subscriptions/${id}/refund`,
        w.admin.token,
        { reason: 'x' },
        { 'idempotency-key': '' },
      ),
    );
    // Authentication and the role come first: a stranger learns nothing from the missing header.
    expect((await w.api.post(`/issuance/subscriptions/${id}/refund`, undefined, { reason: 'x' })).status).toBe(401);
    expect((await w.api.post(`/issuance/subscriptions/${id}/refund`, w.staff.token, { reason: 'x' })).status).toBe(403);
    // With a key the refund is judged as before: nothing was paid, so nothing to refund.
    const keyed = await w.api.post(
      `/issuance/subscriptions/${id}/refund`,
      w.admin.token,
      { reason: 'x' },
      { 'idempotency-key': randomUUID() },
    );
    expect([keyed.status, keyed.body.error?.code]).toEqual([409, 'NOTHING_TO_REFUND']);
  });

  if (set === 'A') {
    it('refuses a reconciliation and a collection retry without one', async () => {
      required(
        await w.api.post('/issuance/reconciliations', w.staff.token, {
          referenceCode: 'TRN-0000-0000-000',
          amount: '1.00',
        }),
      );
      const id = await signedSubscription(w, 2);
      required(await w.api.post(`/issuance/subscriptions/${id}/retry-collection`, w.staff.token));
      const keyed = await w.api.post(
        '/issuance/reconciliations',
        w.staff.token,
        { referenceCode: 'TRN-0000-0000-000', amount: '1.00' },
        { 'idempotency-key': randomUUID() },
      );
      expect(keyed.status).toBe(404);
    });
  }

  it("keeps the spec's rotate-secret working without a key, and answers one rotation to a key sent twice", async () => {
    const staff = await actor(svc, w.staff.orgId, ['staff']);
    const registered = await w.api.post(PATHS[set].endpoints, staff.token, {
      url: 'https://receiver.example/hook',
      description: 'keys',
      eventTypes: ['*'],
    });
    expect(registered.status).toBe(201);
    const rotate = `${PATHS[set].endpoints}/${registered.body.data.id}/rotate-secret`;
    const bare = await w.api.post(rotate, staff.token);
    expect(bare.status).toBe(200);
    const key = { 'idempotency-key': randomUUID() };
    const first = await w.api.post(rotate, staff.token, undefined, key);
    const again = await w.api.post(rotate, staff.token, undefined, key);
    expect(first.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.signing_secret).toBe(first.body.data.signing_secret);
    expect(first.body.data.signing_secret).not.toBe(bare.body.data.signing_secret);
  });

  it('documents the header as required on the routes that require it, and optional on the rest', async () => {
    const doc = (await w.api.get('/openapi.json')).body;
    const header = (path: string) =>
      (doc.paths[path].post.parameters as { name: string; required: boolean }[]).find(
        (p) => p.name === 'Idempotency-Key',
      );
    expect(header('/issuance/subscriptions/{subscription_id}/refund')?.required).toBe(true);
    // Its 400 names the refusal, in the one error envelope.
    const refused = doc.paths['/issuance/subscriptions/{subscription_id}/refund'].post.responses['400'];
    expect(refused.description).toContain('IDEMPOTENCY_KEY_REQUIRED');
    expect(refused.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
    expect(header('/issuance/subscriptions/{subscription_id}/approve')?.required).toBe(false);
    expect(header(`${PATHS[set].endpoints}/{id}/rotate-secret`)?.required).toBe(false);
    if (set === 'A') {
      expect(header('/issuance/reconciliations')?.required).toBe(true);
      expect(header('/issuance/subscriptions/{subscription_id}/retry-collection')?.required).toBe(true);
    }
  });
});
