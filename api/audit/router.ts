import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { ApiDeps } from '../deps';
import { auth } from '../middleware/auth';
import { validate } from '../middleware/validate';
import { ok } from '../respond';
import { auditReads } from './audit-reads';
import { csvHeader, csvLine } from './csv';
import { AuditEventList, AuditEventsQuery, AuditFilterQuery } from './schema';

/** Issue 21: the organisation's audit trail, for its administrators (docs/decisions/README.md, Operating for years). */
export function auditRouter(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/audit' });
  const admin = auth(deps.tokens, 'admin');
  const reads = auditReads(deps.orm);

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
            for await (const row of rows) yield csvLine(row);
          })(),
        );
      },
    ),
  );

  return router;
}
