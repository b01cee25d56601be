import { createHash, randomUUID } from 'node:crypto';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';

/**
 * What the Idempotency-Key store keeps of a request's body (docs/decisions/0382-idempotency-body-digests-sealed.md):
 * its digest sealed, never bare, so a guessed body (a name, an address) cannot be checked against the
 * database; rows kept bare before still match their replays, and a key whose first request died is taken
 * over by the same body only.
 */
const key = () => `key-${randomUUID()}`;
const withKey = (k: string) => ({ 'idempotency-key': k });

/** The body as the store digests it: keys sorted at every depth (api/middleware/idempotency.ts). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}
const bareDigest = (body: unknown) => createHash('sha256').update(canonical(body)).digest('hex');

describe('Idempotency-Key body digests', () => {
  let svc: TestService;
  let w: LifecycleWorld;
  const sql = <T = Record<string, unknown>>(q: string, params: unknown[] = []) =>
    svc.orm.em.getConnection().execute<T[]>(q, params);
  const sign = (id: string, body: unknown, k: string) =>
    w.api.post(`/issuance/subscriptions/${id}/sign-agreement`, w.investor.token, body, withKey(k));

  beforeAll(async () => {
    svc = await startService({ set: 'A' });
    w = await lifecycleWorld(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  it('keeps no bare digest of a body a guess could be checked against', async () => {
    const s = await w.create();
    await w.post(s.id, 'request-signature', w.investor);
    const body = { signature: 'Jane Q Doe', signedAt: '2026-11-21T10:00:00Z', ipAddress: '198.51.100.23' };
    const k = key();
    expect((await sign(s.id, body, k)).status).toBe(200);
    const [row] = await sql<{ request_hash: string }>('select request_hash from idempotency_keys where key = ?', [k]);
    expect(row!.request_hash).not.toBe(bareDigest(body));
    expect(await sql('select 1 from idempotency_keys where request_hash = ?', [bareDigest(body)])).toEqual([]);
    const replay = await sign(s.id, body, k);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((await sign(s.id, { ...body, signature: 'John Q Doe' }, k)).body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');

    // The create's own hash, kept in the projection and the history, is keyed too.
    const create = {
      securityClassId: w.offering.securityClassId,
      unitsSubscribed: 2,
      accreditationStatus: 'Jane Q Doe, 2M',
    };
    const ck = key();
    const url = `/issuance/offerings/${w.offering.offeringId}/subscriptions`;
    const created = await w.api.post(url, w.investor.token, create, withKey(ck));
    expect(created.status).toBe(201);
    const bare = createHash('sha256')
      .update(JSON.stringify([w.offering.offeringId, Object.entries(create).sort(([a], [b]) => a.localeCompare(b))]))
      .digest('hex');
    const [sub] = await sql<{ request_hash: string }>('select request_hash from subscriptions where id = ?', [
      created.body.data.id,
    ]);
    expect(sub!.request_hash).toMatch(/^rh:v1:/);
    expect(sub!.request_hash).not.toContain(bare);
  });

  it('still replays a row kept with a bare digest before digests were sealed, until it expires', async () => {
    const s = await w.create();
    await w.post(s.id, 'request-signature', w.investor);
    const body = { signature: 'Ada Lovelace', signedAt: '2026-11-21T10:00:00Z' };
    const k = key();
    const first = await sign(s.id, body, k);
    expect(first.status).toBe(200);
    await sql('update idempotency_keys set request_hash = ? where key = ?', [bareDigest(body), k]);
    const replay = await sign(s.id, body, k);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect((await sign(s.id, { ...body, signature: 'Someone Else' }, k)).body.error.code).toBe(
      'IDEMPOTENCY_KEY_REUSED',
    );
  });

  it('lets the same body, and only it, take over a key whose first request died holding it', async () => {
    for (const kept of ['sealed', 'bare'] as const) {
      const s = await w.create();
      await w.post(s.id, 'request-signature', w.investor);
      const body = { signature: `Grace Hopper ${kept}`, signedAt: '2026-11-21T10:00:00Z' };
      const k = key();
      expect((await sign(s.id, body, k)).status).toBe(200);
      // As if that request had died before keeping its answer: held, its lease over.
      await sql(
        `update idempotency_keys set status = null, body_sealed = null, locked_until = now() - interval '1 second'
          where key = ?`,
        [k],
      );
      if (kept === 'bare')
        await sql('update idempotency_keys set request_hash = ? where key = ?', [bareDigest(body), k]);
      expect((await sign(s.id, { ...body, signature: 'Someone Else' }, k)).body.error.code).toBe(
        'IDEMPOTENCY_KEY_REUSED',
      );
      // The same body runs again, as the same Temporal update: its outcome, not a second signature.
      const taken = await sign(s.id, body, k);
      expect([kept, taken.status, taken.headers.get('idempotent-replayed')]).toEqual([kept, 200, null]);
      expect(taken.body.data.status).toBe('pending_payment');
      const [row] = await sql<{ request_hash: string; status: number }>(
        'select request_hash, status from idempotency_keys where key = ?',
        [k],
      );
      expect(row!.status).toBe(200);
      expect(row!.request_hash).not.toBe(bareDigest(body));
    }
  });
});
