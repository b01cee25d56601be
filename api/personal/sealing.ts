import type { Orm } from '../../db/orm';
import { personalKeys, type PersonalKeys } from '../../db/personal-keys';
import type { Config } from '../../lib/runtime/config';
import { ERASED, holdsSealed, keyedHash, openValue, sealedKeyIds, sealWith } from '../../lib/personal-data';

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

/** One investor's key as the API uses it: to seal their words, and to hash a request that holds them. */
export interface InvestorSealer {
  /** The investor was erased: nothing personal is kept of them again. */
  erased: boolean;
  /** Sealed under their key; the erased marker once they were erased. */
  seal(clear: string): string;
  /** A keyed hash (lib/personal-data.ts keyedHash); only while `erased` is false. */
  hash(text: string): string;
}

/**
 * The investor's key, made on first use, as a sealer (docs/decisions/0313-erasure-by-crypto-shredding.md,
 * docs/decisions/0381-erasure-complete.md).
 */
export function investorSealer(deps: { orm: Orm; config: Pick<Config, 'PERSONAL_DATA_KEYS'> }) {
  const keys = personalKeysOf(deps);
  return async (owner: { orgId: string; userId: string }): Promise<InvestorSealer> => {
    const key = await keys.keyOf(owner.orgId, owner.userId);
    return {
      erased: key === null,
      seal: (clear) => (key ? sealWith(key, clear) : ERASED),
      hash: (text) => {
        if (!key) throw new Error('an erased investor has no key to hash under');
        return keyedHash(key, text);
      },
    };
  };
}

/**
 * Seals what an investor hands us that is theirs (a signature, the address they signed from, their
 * answers, a document's file name, their self-reported accreditation) under their own key before it
 * goes anywhere: the workflow, the projection, events, the audit trail
 * (docs/decisions/0313-erasure-by-crypto-shredding.md). Once the investor was erased nothing personal
 * is kept of them again: each value is stored as the erased marker.
 */
export function personalSealer(deps: { orm: Orm; config: Pick<Config, 'PERSONAL_DATA_KEYS'> }) {
  const sealerOf = investorSealer(deps);
  return async <T extends readonly string[]>(owner: { orgId: string; userId: string }, values: T): Promise<T> => {
    const investor = await sealerOf(owner);
    return values.map((v) => investor.seal(v)) as unknown as T;
  };
}

/**
 * `value` with its sealed personal fields opened, or shown as the erased marker once their investor's
 * key is gone, or as unreadable when the key is not `orgId`'s (the organisation the read is for);
 * `value` itself when it holds none (the common case: one search, no query).
 */
export async function openSealed<T>(keys: Pick<PersonalKeys, 'open'>, orgId: string | null, value: T): Promise<T> {
  const text = JSON.stringify(value);
  if (!holdsSealed(text)) return value;
  return openValue(value, await keys.open(orgId, sealedKeyIds(text))) as T;
}
