import type { Orm } from '../../db/orm';
import { personalKeys, type PersonalKeys } from '../../db/personal-keys';
import type { Config } from '../../lib/runtime/config';
import { ERASED, holdsSealed, openValue, sealedKeyIds, sealWith } from '../../lib/personal-data';

/** One set of keys per pool: every router of a process shares it (no cache of opened keys: an erasure takes effect at once). */
const byOrm = new WeakMap<Orm, PersonalKeys>();

export function personalKeysOf(deps: { orm: Orm; config: Pick<Config, 'PERSONAL_DATA_KEYS'> }): PersonalKeys {
  let keys = byOrm.get(deps.orm);
  if (!keys) {
    keys = personalKeys(() => deps.orm.em.getConnection().getKnex(), deps.config.PERSONAL_DATA_KEYS);
    byOrm.set(deps.orm, keys);
  }
  return keys;
}

/**
 * Seals what an investor hands us that is theirs (a signature, the address they signed from, their
 * answers, a document's file name) under their own key before it goes anywhere: the workflow, the
 * projection, events, the audit trail (docs/decisions/0313-erasure-by-crypto-shredding.md). Once the
 * investor was erased nothing personal is kept of them again: each value is stored as the erased marker.
 */
export function personalSealer(deps: { orm: Orm; config: Pick<Config, 'PERSONAL_DATA_KEYS'> }) {
  const keys = personalKeysOf(deps);
  return async <T extends readonly string[]>(owner: { orgId: string; userId: string }, values: T): Promise<T> => {
    const key = await keys.keyOf(owner.orgId, owner.userId);
    return values.map((v) => (key ? sealWith(key, v) : ERASED)) as unknown as T;
  };
}

/**
 * `value` with its sealed personal fields opened, or shown as the erased marker once their investor's
 * key is gone; `value` itself when it holds none (the common case: one search, no query).
 */
export async function openSealed<T>(keys: Pick<PersonalKeys, 'open'>, value: T): Promise<T> {
  const text = JSON.stringify(value);
  if (!holdsSealed(text)) return value;
  return openValue(value, await keys.open(sealedKeyIds(text))) as T;
}
