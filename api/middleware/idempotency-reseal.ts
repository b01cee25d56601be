import type { Orm } from '../../db/orm';
import type { SecretBox } from '../../webhooks';
import { requestHashAad, scopeIdOf } from '../../db/idempotency-keys';

interface KeptRow {
  principal: string;
  method: string;
  path: string;
  key: string;
  request_hash: string;
  body_sealed: string | null;
}

/**
 * Re-seals the Idempotency-Key store's sealed values (each kept answer, and each body digest:
 * docs/decisions/0382-idempotency-body-digests-sealed.md) still under another key than the box's
 * current one, so that key can leave WEBHOOK_SECRET_KEYS without waiting for them to expire
 * (`npm run -s webhook-secrets -- reseal`, docs/decisions/0138-webhook-secret-keyring.md). Unexpired
 * rows only, `batch` at a time in key order; a row changed since it was read (its request answered,
 * its key claimed afresh) is left as it is, for the next run. A bare digest from before digests were
 * sealed is left too: nothing to reseal, and it expires.
 */
export async function resealKeptAnswers(
  orm: Orm,
  box: SecretBox,
  batch = 500,
): Promise<{ resealed: number; current: number }> {
  const knex = orm.em.getConnection().getKnex();
  const stale = (v: string | null) =>
    v !== null && box.sealedUnder(v) !== null && box.sealedUnder(v) !== box.currentKeyId;
  const fresh = (v: string | null) => v !== null && box.sealedUnder(v) === box.currentKeyId;
  let resealed = 0;
  let current = 0;
  let after: KeptRow | null = null;
  for (;;) {
    const q = knex<KeptRow>('idempotency_keys')
      .where('expires_at', '>', knex.fn.now())
      .orderBy(['principal', 'method', 'path', 'key'])
      .limit(batch)
      .select('principal', 'method', 'path', 'key', 'request_hash', 'body_sealed');
    if (after)
      q.whereRaw('(principal, method, path, key) > (?, ?, ?, ?)', [
        after.principal,
        after.method,
        after.path,
        after.key,
      ]);
    const rows: KeptRow[] = await q;
    for (const row of rows) {
      const scopeId = scopeIdOf(row);
      current += [row.request_hash, row.body_sealed].filter(fresh).length;
      if (!stale(row.request_hash) && !stale(row.body_sealed)) continue;
      const again = (aad: string, v: string | null) => (stale(v) ? box.seal(aad, box.open(aad, v!)) : v);
      const updated = await knex('idempotency_keys')
        .where({ principal: row.principal, method: row.method, path: row.path, key: row.key })
        .where('request_hash', row.request_hash)
        .whereRaw('body_sealed is not distinct from ?', [row.body_sealed])
        .update({
          request_hash: again(requestHashAad(scopeId), row.request_hash),
          body_sealed: again(scopeId, row.body_sealed),
        });
      if (updated) resealed += [row.request_hash, row.body_sealed].filter(stale).length;
    }
    if (rows.length < batch) return { resealed, current };
    after = rows[rows.length - 1]!;
  }
}
