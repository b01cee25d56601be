import type { Knex } from '@mikro-orm/postgresql';

/** The columns of an endpoint that hold a value sealed by the secret box (webhooks/secrets/secret-box.ts). */
export const SEALED_COLUMNS = [
  'secret_ciphertext',
  'previous_secret_ciphertext',
  'authentication_secret_ciphertext',
  'headers_secret_ciphertext',
] as const;
export type SealedColumn = (typeof SEALED_COLUMNS)[number];

/** Every endpoint (deleted ones too) with its sealed values, for a re-seal under the keyring's current key. */
export function sealedEndpointValues(
  knex: Knex,
): Promise<({ id: string; org_id: string } & Record<SealedColumn, string | null>)[]> {
  return knex('webhook_endpoints').select('id', 'org_id', ...SEALED_COLUMNS);
}

/**
 * Writes an endpoint's re-sealed values in `trx` if it still holds the values read (`was`): a row
 * changed since (a rotation, another re-seal) is left as it is. Answers whether it was written.
 */
export async function replaceSealedValues(
  trx: Knex.Transaction,
  id: string,
  was: Partial<Record<SealedColumn, string | null>>,
  fresh: Partial<Record<SealedColumn, string>>,
): Promise<boolean> {
  const changed = await trx('webhook_endpoints')
    .where({ id, ...was })
    .update(fresh);
  return changed > 0;
}
