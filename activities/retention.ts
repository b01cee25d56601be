import { Context } from '@temporalio/activity';
import type { Knex } from '@mikro-orm/postgresql';
import type { Orm } from '../db/orm';
import type { Config } from '../lib/runtime/config';
import { retentionWindowSeconds } from '../lib/runtime/settings/retention-settings';
import { pruneExpiredIdempotencyKeys, prunePaymentNotifications } from '../db/retention';
import { recordPruneRun, recordRowsPruned } from '../lib/runtime/metrics';
import { pruneEventBatch } from '../webhooks';
import {
  noRowsPruned,
  type PruneStatement,
  type RetentionProgress,
  type RetentionResult,
  type RetentionStage,
  type RetentionStep,
} from '../domain/retention-messages';

/** Statements one activity call runs at most, and for how long: short calls keep the workflow's progress current. */
const STATEMENTS_PER_CALL = 20;
const CALL_BUDGET_MS = 20_000;

type RetentionConfig = Pick<
  Config,
  | 'RETENTION_EVENTS_DAYS'
  | 'RETENTION_PAYMENT_NOTIFICATIONS_DAYS'
  | 'RETENTION_BATCH_SIZE'
  | 'RETENTION_EVENTS_SECONDS'
  | 'RETENTION_PAYMENT_NOTIFICATIONS_SECONDS'
>;

/** One statement of one concern's prune, from where the last stopped, deleting `limit` rows at most. */
type Prune = (knex: Knex, afterSeq: string, limit: number) => Promise<PruneStatement>;

/**
 * Retention's one entry: every concern that prunes, in the order a run takes them
 * (RETENTION_STAGES), each with its window and the one place its rules live
 * (docs/decisions/0328-one-home-per-table.md). Null: its window is 0, kept forever. Not pruned yet:
 * the audit trail (docs/decisions/0212-audit-retention.md), whose rules will sit in db/audit-log.ts.
 */
function retentionConcerns(config: RetentionConfig): Record<RetentionStage, Prune | null> {
  const events = retentionWindowSeconds(config.RETENTION_EVENTS_SECONDS, config.RETENTION_EVENTS_DAYS);
  const notifications = retentionWindowSeconds(
    config.RETENTION_PAYMENT_NOTIFICATIONS_SECONDS,
    config.RETENTION_PAYMENT_NOTIFICATIONS_DAYS,
  );
  return {
    // The engine's outbox with its finished deliveries and attempts, bodies and ping targets (webhooks/events/retention.ts).
    events:
      events === 0 ? null : (knex, afterSeq, limit) => pruneEventBatch(knex, { seconds: events, afterSeq, limit }),
    // Processor notifications, by age (db/retention.ts).
    payment_notifications:
      notifications === 0
        ? null
        : (knex, afterSeq, limit) => prunePaymentNotifications(knex, { seconds: notifications, afterSeq, limit }),
    // Idempotency-Keys past their own expiry (db/retention.ts).
    idempotency_keys: (knex, afterSeq, limit) => pruneExpiredIdempotencyKeys(knex, { afterSeq, limit }),
  };
}

/**
 * The retention prune's activities (workflows/retention-prune.ts): a few batch statements of one
 * group per call, heartbeating after each, and the metrics of a finished run.
 */
export function createRetentionActivities(deps: { orm: Orm; config: RetentionConfig }) {
  const { config } = deps;
  const concerns = retentionConcerns(config);
  return {
    async pruneRetention(step: RetentionStep): Promise<RetentionProgress> {
      const ctx = Context.current();
      const knex = deps.orm.em.getConnection().getKnex();
      const progress: RetentionProgress = {
        deleted: noRowsPruned(),
        statements: 0,
        afterSeq: step.afterSeq,
        done: false,
      };
      const prune = concerns[step.stage];
      if (!prune) return { ...progress, done: true };
      const started = Date.now();
      let lastStatementMs = 0;
      while (!progress.done && progress.statements < STATEMENTS_PER_CALL && Date.now() - started < CALL_BUDGET_MS) {
        // Paced: after each statement the prune rests as long as the statement took, so it never
        // holds more than half of a connection and a core from the first attempts it runs beside.
        if (progress.statements > 0) await ctx.sleep(lastStatementMs);
        const statementStarted = Date.now();
        const statement = await prune(knex, progress.afterSeq, config.RETENTION_BATCH_SIZE);
        const counts = { ...noRowsPruned(), ...statement.deleted };
        progress.afterSeq = statement.afterSeq;
        progress.done = statement.done;
        progress.statements++;
        lastStatementMs = Date.now() - statementStarted;
        for (const [table, n] of Object.entries(counts)) progress.deleted[table as keyof typeof counts] += n;
        recordRowsPruned(counts);
        ctx.heartbeat(progress);
        if (ctx.cancellationSignal.aborted) break; // cancelled, or the worker is stopping: stop between statements
      }
      return progress;
    },

    async recordRetentionRun(result: RetentionResult): Promise<void> {
      recordPruneRun(new Date(result.finishedAt), result.deleted);
    },
  };
}
