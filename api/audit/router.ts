import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { ApiDeps } from '../deps';
import { auth } from '../middleware/auth';
import { validate } from '../middleware/validate';
import { ok } from '../respond';
import { auditReads } from './audit-reads';
import { csvHeader, csvLine } from './csv';
import type { AuditRow } from '../../db/audit-log';
import { openSealed, personalKeysOf } from '../personal/sealing';
import { AuditEventList, AuditEventsQuery, AuditFilterQuery } from './schema';

/** The organisation's audit trail, for its administrators (docs/decisions/README.md, Operating for years). */
export function auditRouter(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/audit' });
  const admin = auth(deps.tokens, 'admin');
  const reads = auditReads(deps.orm);
  const keys = personalKeysOf(deps);
  /** A row's personal fields in clear, or the erased marker: the CSV is a read like the JSON list (decision 0313). */
  const opened = async (row: AuditRow): Promise<AuditRow> => {
    const [before, after] = await openSealed(keys, row.org_id, [row.before, row.after] as const);
    return before === row.before && after === row.after ? row : { ...row, before, after };
  };

  router.get(
    '/events',
    admin,
    validate(
      {
        query: AuditEventsQuery,
        response: AuditEventList,
        summary: "The organisation's audit trail, newest first, filtered by actor, action, subject and time (admin)",
      },
      async (ctx, { query }) => {
        ok(ctx, await reads.page(ctx.state.principal.orgId, query));
      },
    ),
  );

  router.get(
    '/events.csv',
    admin,
    validate(
      {
        query: AuditFilterQuery,
        produces: 'text/csv',
        summary: 'The audit trail as CSV, every entry the filters match, newest first (admin)',
      },
      (ctx, { query }) => {
        const rows = reads.all(ctx.state.principal.orgId, query);
        ctx.type = 'text/csv; charset=utf-8';
        ctx.attachment('audit-events.csv');
        ctx.body = Readable.from(
          (async function* () {
            yield csvHeader();
            for await (const row of rows) yield csvLine(await opened(row));
          })(),
        );
      },
    ),
  );

  return router;
}
