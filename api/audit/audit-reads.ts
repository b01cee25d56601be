import type { Knex } from '@mikro-orm/postgresql';
import type { AuditRow } from '../../db/audit-log';
import type { Orm } from '../../db/orm';
import { decodeSeqCursor, encodeSeqCursor } from '../cursor';
import type { AuditFilter } from './schema';

/** An organisation's audit entries matching the filter, newest first (by their place in the chain). */
function filtered(knex: Knex, orgId: string, f: AuditFilter): Knex.QueryBuilder {
  const q = knex('audit_events').where({ org_id: orgId });
  if (f.actor) q.where('actor_user_id', f.actor);
  if (f.action?.endsWith('.*')) q.where('action', 'like', `${f.action.slice(0, -2).replace(/[\\%_]/g, '\\$&')}.%`);
  else if (f.action) q.where('action', f.action);
  if (f.subject_type) q.where('subject_type', f.subject_type);
  if (f.subject_id) q.where('subject_id', f.subject_id);
  if (f.outcome) q.where('outcome', f.outcome);
  if (f.from) q.where('occurred_at', '>=', new Date(f.from));
  if (f.to) q.where('occurred_at', '<', new Date(f.to));
  return q.orderBy('seq', 'desc');
}

const auditEventView = (r: AuditRow) => ({
  id: r.id,
  seq: String(r.seq),
  occurred_at: new Date(r.occurred_at).toISOString(),
  actor: {
    user_id: r.actor_user_id,
    roles: r.actor_roles,
    api_key_id: r.actor_api_key_id,
    console_session: r.actor_session,
    client_address: r.client_address,
  },
  action: r.action,
  subject: { type: r.subject_type, id: r.subject_id },
  outcome: r.outcome,
  error_code: r.error_code,
  request_id: r.request_id,
  before: r.before,
  after: r.after,
  hash: r.hash,
  prev_hash: r.prev_hash,
});

export function auditReads(orm: Orm) {
  const knex = () => orm.em.getConnection().getKnex();
  return {
    async page(orgId: string, f: AuditFilter & { limit: number; cursor?: string }) {
      const q = filtered(knex(), orgId, f).limit(f.limit + 1);
      if (f.cursor) q.where('seq', '<', decodeSeqCursor(f.cursor));
      const rows: AuditRow[] = await q;
      const items = rows.slice(0, f.limit);
      const last = items[items.length - 1];
      return {
        items: items.map(auditEventView),
        next_cursor: rows.length > f.limit && last ? encodeSeqCursor(last.seq) : null,
      };
    },

    /** Every matching entry, a batch at a time, so an export of years holds one batch in memory. */
    async *all(orgId: string, f: AuditFilter, batch = 1000): AsyncGenerator<AuditRow> {
      let before: string | null = null;
      for (;;) {
        const q = filtered(knex(), orgId, f).limit(batch);
        if (before !== null) q.where('seq', '<', before);
        const rows: AuditRow[] = await q;
        yield* rows;
        if (rows.length < batch) return;
        before = rows[rows.length - 1]!.seq;
      }
    },
  };
}
