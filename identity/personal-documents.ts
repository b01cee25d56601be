import type { Knex } from '@mikro-orm/postgresql';
import { isKept } from '../lib/personal-markers';

/**
 * Accreditation documents whose file name was stored in clear, before file names were sealed
 * (docs/decisions/0384-resealing-fields-written-in-clear.md): with `keeperOf`, each is replaced by what
 * it gives (sealed under the investor's key, or the erased marker), each row only if unchanged since
 * read; without, they are only counted. `batch` rows a statement.
 */
export async function keepClearFileNames(
  knex: Knex,
  scope: { orgId?: string; userId?: string },
  keeperOf: ((orgId: string, userId: string) => Promise<(clear: string) => string>) | null,
  batch = 500,
): Promise<number> {
  let found = 0;
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const q = knex('accreditation_documents as d')
      .join('accreditations as a', 'a.id', 'd.accreditation_id')
      .where('d.id', '>', after)
      .orderBy('d.id')
      .limit(batch)
      .select('d.id', 'd.file_name', 'a.org_id', 'a.user_id');
    if (scope.orgId) q.where('a.org_id', scope.orgId);
    if (scope.userId) q.where('a.user_id', scope.userId);
    const rows: { id: string; file_name: string; org_id: string; user_id: string }[] = await q;
    for (const row of rows) {
      if (isKept(row.file_name)) continue;
      if (!keeperOf) {
        found += 1;
        continue;
      }
      const keep = await keeperOf(row.org_id, row.user_id);
      found += await knex('accreditation_documents')
        .where({ id: row.id, file_name: row.file_name })
        .update({ file_name: keep(row.file_name) });
    }
    if (rows.length < batch) return found;
    after = rows[rows.length - 1]!.id;
  }
}
