import type Router from '@koa/router';
import { recordingRefusals, recordSucceeded } from '../audit/audit-recorder';
import type { ApiDeps } from '../deps';
import { auth } from '../middleware/auth';
import { validate } from '../middleware/validate';
import { ok } from '../respond';
import { consoleSessions, statusOf, toConsoleSessionView } from '../../identity';
import { ConsoleSessionList, ConsoleSessionParams } from './schema';

/**
 * An administrator sees their organisation's console sessions and ends one (a lost laptop, a
 * person who left): its cookie is refused at once, its tokens within TOKEN_REVOCATION_CACHE_SECONDS
 * (docs/decisions/0271-console-sessions-server-side.md, 0272-revocation-at-verify.md).
 */
export function consoleSessionRoutes(router: Router, deps: ApiDeps): void {
  const admin = auth(deps.tokens, 'admin');
  const knex = () => deps.orm.em.getConnection().getKnex();

  router.get(
    '/identity/console-sessions',
    admin,
    validate(
      {
        response: ConsoleSessionList,
        summary: "List the organisation's console sessions, newest first, at most 200 (admin)",
      },
      async (ctx) => {
        ok(ctx, (await consoleSessions.list(knex(), ctx.state.principal.orgId)).map(toConsoleSessionView));
      },
    ),
  );

  router.delete(
    '/identity/console-sessions/:session_id',
    admin,
    validate(
      {
        params: ConsoleSessionParams,
        status: 204,
        summary: 'End a console session (admin); ending it twice is no error',
      },
      async (ctx, input) => {
        const subject = { type: 'console_session', id: input.params.session_id };
        const p = ctx.state.principal;
        await recordingRefusals(deps.orm, ctx, { action: 'console_session.revoke', subject }, () =>
          knex().transaction(async (trx) => {
            const { before, after } = await consoleSessions.revoke(trx, p.orgId, subject.id, p.userId);
            await recordSucceeded(trx, ctx, {
              action: 'console_session.revoke',
              subject,
              before: { status: statusOf(before), user_id: before.user_id },
              after: { status: statusOf(after), revoked_at: after.revoked_at?.toISOString() ?? null },
            });
          }),
        );
        deps.tokens.forget('session', subject.id);
        ctx.status = 204;
      },
    ),
  );
}
