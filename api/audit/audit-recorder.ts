import type { Knex } from '@mikro-orm/postgresql';
import type { Context } from 'koa';
import type { Principal } from '../../domain/principal';
import { appendAuditEvent, type AuditActor } from '../../db/audit-log';
import type { Orm } from '../../db/orm';
import { logger } from '../../lib/runtime/logger';
import type { Ctx } from '../middleware/validate';
import { toAppError } from '../middleware/error-envelope';
import { cutToCodePoints } from '../../lib/text';

/** What one audited action did, besides who did it (the request says that). */
export interface AuditSpec {
  action: string;
  subject: { type: string; id: string };
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

/** The caller as the request knows it: the token's user, roles and API key or console session, its address and id. */
const auditActor = (ctx: Ctx): AuditActor => actorOf(ctx, ctx.state.principal);

function actorOf(ctx: Context, p: Principal): AuditActor {
  return {
    userId: p.userId,
    roles: p.roles,
    apiKeyId: p.apiKeyId ?? null,
    session: p.consoleSession ?? null,
    // Koa's ctx.ip: the socket's address, or X-Forwarded-For's as TRUST_PROXY(_HOPS) decide (server/app.ts).
    clientAddress: ctx.ip || null,
    requestId: (ctx.state as { requestId?: string }).requestId ?? null,
  };
}

/** Records a change that succeeded, in the transaction that makes it: both commit, or neither. */
export async function recordSucceeded(db: Knex | Knex.Transaction, ctx: Ctx, spec: AuditSpec): Promise<void> {
  await appendAuditEvent(db, {
    orgId: ctx.state.principal.orgId,
    actor: auditActor(ctx),
    action: spec.action,
    subject: spec.subject,
    result: { outcome: 'succeeded' },
    before: spec.before,
    after: spec.after,
  });
}

/**
 * Runs an audited action; when the service refuses it (an error answered 4xx: a policy, a state,
 * a missing record), records the refusal with its code in a transaction of its own, since the
 * change's transaction rolled back, and rethrows. A failure on our side (5xx, or a command whose
 * outcome is unknown) is not a decision and is not recorded.
 */
export async function recordingRefusals<T>(
  orm: Orm,
  ctx: Ctx,
  spec: Pick<AuditSpec, 'action' | 'subject' | 'before'>,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const refusal = toAppError(err);
    if (refusal.status < 500) {
      await appendAuditEvent(orm.em.getConnection().getKnex(), {
        orgId: ctx.state.principal.orgId,
        actor: auditActor(ctx),
        action: spec.action,
        subject: spec.subject,
        result: { outcome: 'refused', errorCode: refusal.code },
        before: spec.before,
      }).catch((auditErr: unknown) => logger.error({ err: auditErr, action: spec.action }, 'refusal not audited'));
    }
    throw err;
  }
}

/** The knex of one MikroORM transaction, for the audit entry written beside its changes. */
export const transactionOf = (em: { getTransactionContext<T>(): T | undefined }): Knex.Transaction => {
  const trx = em.getTransactionContext<Knex.Transaction>();
  if (!trx) throw new Error('an audit entry needs the transaction of its change');
  return trx;
};

/** The short "after" of a staff decision: the record's new status and the reason given, if any. */
export function decisionAfter(result: unknown, reason?: string | null): Record<string, unknown> {
  const status = (result as { status?: unknown } | null)?.status;
  return {
    status: typeof status === 'string' ? status : null,
    ...(reason ? { reason: cutToCodePoints(reason, 200) } : {}),
  };
}

/**
 * A command answered by a Temporal update, which no database transaction of ours can hold: the
 * entry is written after the update answers (succeeded) or refuses (refused). `run` may fill in
 * the spec's subject and `before` once it has read them, so a refusal records what it knew.
 */
export async function recordCommand<T>(
  orm: Orm,
  ctx: Ctx,
  spec: AuditSpec,
  run: (spec: AuditSpec) => Promise<T>,
  after: (result: T) => Record<string, unknown>,
): Promise<T> {
  const result = await recordingRefusals(orm, ctx, spec, () => run(spec));
  await recordSucceeded(orm.em.getConnection().getKnex(), ctx, { ...spec, after: after(result) });
  return result;
}

/**
 * A console sign-in or sign-out, in the transaction that opens or ends the session's record
 * (identity/console-sessions.ts): both commit, or neither.
 */
export async function recordConsoleSession(
  trx: Knex.Transaction,
  ctx: Context,
  principal: Principal,
  action: 'console.sign_in' | 'console.sign_out',
): Promise<void> {
  await appendAuditEvent(trx, {
    orgId: principal.orgId,
    actor: actorOf(ctx, principal),
    action,
    subject: { type: 'console_session', id: principal.consoleSession ?? 'unknown' },
    result: { outcome: 'succeeded' },
  });
}
