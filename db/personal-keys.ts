import type { Knex } from '@mikro-orm/postgresql';
import { newId } from '../lib/ids';
import {
  newDataKeyBytes,
  unwrapKey,
  wrapKey,
  type DataKey,
  type OpenKeys,
  type WrappingKey,
} from '../lib/personal-data';

/**
 * Investors' data keys (personal_data_keys, migration 0080), wrapped under PERSONAL_DATA_KEYS, and
 * their erasure and legal holds (docs/decisions/0313-erasure-by-crypto-shredding.md). Making a key,
 * erasing and placing a hold take one investor's advisory lock, so a key is never made beside an
 * erasure that is committing, and a hold and an erasure never pass each other.
 */
export interface PersonalKeys {
  /** The investor's key, made on first use; null once they were erased (nothing personal is kept of them again). */
  keyOf(orgId: string, userId: string): Promise<DataKey | null>;
  /**
   * The keys these ids name that still exist, for a read in `orgId`'s name: unwrapped when the key is
   * that organisation's, null when it is another's (a sealed value copied across organisations does
   * not open, docs/decisions/0381-erasure-complete.md); a destroyed one is absent. `orgId` null (a
   * read in no organisation's name) opens none.
   */
  open(orgId: string | null, ids: readonly string[]): Promise<OpenKeys>;
}

const lockInvestor = (trx: Knex.Transaction, orgId: string, userId: string) =>
  trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`personal:${orgId}:${userId}`]);

export function personalKeys(knex: () => Knex, ring: readonly WrappingKey[] | undefined): PersonalKeys {
  const wrapping = () => {
    const current = ring?.[0];
    if (!current)
      throw new Error(
        'PERSONAL_DATA_KEYS is not set: investors\u2019 data keys are wrapped with it (lib/runtime/config.ts)',
      );
    return ring!;
  };
  const unwrap = (row: { id: string; wrapped_key: string }): DataKey => ({
    id: row.id,
    key: unwrapKey(wrapping(), row.id, row.wrapped_key),
  });

  return {
    async keyOf(orgId, userId) {
      const found = await knex()('personal_data_keys')
        .where({ org_id: orgId, user_id: userId })
        .first('id', 'wrapped_key');
      if (found) return unwrap(found);
      return knex().transaction(async (trx) => {
        await lockInvestor(trx, orgId, userId);
        const erased = await trx('personal_data_erasures').where({ org_id: orgId, user_id: userId }).first('org_id');
        if (erased) return null;
        const again = await trx('personal_data_keys')
          .where({ org_id: orgId, user_id: userId })
          .first('id', 'wrapped_key');
        if (again) return unwrap(again);
        const made = { id: newId(), key: newDataKeyBytes() };
        await trx('personal_data_keys').insert({
          id: made.id,
          org_id: orgId,
          user_id: userId,
          wrapped_key: wrapKey(wrapping()[0]!, made),
        });
        return made;
      });
    },

    async open(orgId, ids) {
      if (ids.length === 0) return new Map();
      const rows: { id: string; org_id: string; wrapped_key: string }[] = await knex()('personal_data_keys')
        .whereIn('id', [...ids])
        .select('id', 'org_id', 'wrapped_key');
      // Another organisation's key is never unwrapped for this read: its values show as unreadable.
      return new Map(rows.map((r) => [r.id, r.org_id === orgId ? unwrap(r).key : null]));
    },
  };
}

/** Why an erasure was refused: a legal hold stands. */
export class LegalHoldStands extends Error {}

interface Erasure {
  erasedAt: Date;
  erasedBy: string;
  keysDestroyed: number;
  /** False when the investor had been erased before (a repeat changes nothing). */
  now: boolean;
}

/**
 * Destroys the investor's data key inside the caller's transaction (its audit entry commits with
 * it), and records the erasure; refused while a legal hold stands.
 */
export async function eraseInvestor(
  trx: Knex.Transaction,
  orgId: string,
  userId: string,
  by: string,
): Promise<Erasure> {
  await lockInvestor(trx, orgId, userId);
  const earlier = await trx('personal_data_erasures')
    .where({ org_id: orgId, user_id: userId })
    .first('erased_at', 'erased_by', 'keys_destroyed');
  if (earlier)
    return {
      erasedAt: earlier.erased_at,
      erasedBy: earlier.erased_by,
      keysDestroyed: earlier.keys_destroyed,
      now: false,
    };
  if (await trx('legal_holds').where({ org_id: orgId, user_id: userId }).first('org_id')) throw new LegalHoldStands();
  const keysDestroyed = await trx('personal_data_keys').where({ org_id: orgId, user_id: userId }).delete();
  const [row] = await trx('personal_data_erasures')
    .insert({ org_id: orgId, user_id: userId, erased_by: by, keys_destroyed: keysDestroyed })
    .returning(['erased_at']);
  return { erasedAt: row.erased_at, erasedBy: by, keysDestroyed, now: true };
}

interface LegalHold {
  placedAt: Date;
  placedBy: string;
  reason: string;
}

/** Places a hold (a standing one is kept as it is) inside the caller's transaction. */
export async function placeLegalHold(
  trx: Knex.Transaction,
  orgId: string,
  userId: string,
  by: string,
  reason: string,
): Promise<LegalHold & { now: boolean }> {
  await lockInvestor(trx, orgId, userId);
  const inserted = await trx('legal_holds')
    .insert({ org_id: orgId, user_id: userId, placed_by: by, reason })
    .onConflict(['org_id', 'user_id'])
    .ignore()
    .returning(['placed_at']);
  const row = await trx('legal_holds')
    .where({ org_id: orgId, user_id: userId })
    .first('placed_at', 'placed_by', 'reason');
  return { placedAt: row.placed_at, placedBy: row.placed_by, reason: row.reason, now: inserted.length > 0 };
}

/** Lifts a hold; answers the hold that stood, or null when none did. */
export async function liftLegalHold(trx: Knex.Transaction, orgId: string, userId: string): Promise<LegalHold | null> {
  await lockInvestor(trx, orgId, userId);
  const [row] = await trx('legal_holds')
    .where({ org_id: orgId, user_id: userId })
    .delete()
    .returning(['placed_at', 'placed_by', 'reason']);
  return row ? { placedAt: row.placed_at, placedBy: row.placed_by, reason: row.reason } : null;
}

/**
 * Re-wraps every investor's data key still wrapped under another key than the first of
 * PERSONAL_DATA_KEYS, so an older wrapping key can leave the list (`npm run -s personal-data -- rewrap`,
 * docs/decisions/0383-personal-data-keys-rewrapped.md). The data keys themselves do not change: nothing
 * sealed under them is touched. `batch` rows a statement in id order; a row changed since it was read
 * (an erasure deleted it) is left as it is. A key wrapped under a key not in the list fails, naming it.
 */
export async function rewrapPersonalKeys(
  knex: Knex,
  ring: readonly WrappingKey[],
  batch = 500,
): Promise<{ rewrapped: number; current: number }> {
  const newest = ring[0];
  if (!newest) throw new Error('PERSONAL_DATA_KEYS is not set: nothing to rewrap under');
  const counts = { rewrapped: 0, current: 0 };
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const rows: { id: string; wrapped_key: string }[] = await knex('personal_data_keys')
      .where('id', '>', after)
      .orderBy('id')
      .limit(batch)
      .select('id', 'wrapped_key');
    for (const row of rows) {
      if (row.wrapped_key.slice(0, row.wrapped_key.indexOf(':')) === newest.id) {
        counts.current += 1;
        continue;
      }
      const rewrapped = wrapKey(newest, { id: row.id, key: unwrapKey(ring, row.id, row.wrapped_key) });
      counts.rewrapped += await knex('personal_data_keys')
        .where({ id: row.id, wrapped_key: row.wrapped_key })
        .update({ wrapped_key: rewrapped });
    }
    if (rows.length < batch) return counts;
    after = rows[rows.length - 1]!.id;
  }
}
