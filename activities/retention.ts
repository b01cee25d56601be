import { Context } from '@temporalio/activity';
import type { Orm } from '../db/orm';
import type { Config } from '../lib/runtime/config';
import { pruneExpiredIdempotencyKeys, prunePaymentNotifications } from '../db/retention';
import { recordPruneRun, recordRowsPruned } from '../lib/runtime/metrics';
import { pruneEventBatch } from '../webhooks';
import {
  noRowsPruned,
  type RetentionProgress,
  type RetentionResult,
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

/** A window in seconds: the short override when set, else the days (0: kept forever). */
const windowSeconds = (seconds: number | undefined, days: number) => seconds ?? days * 86_400;

/**
 * The retention prune's activities (workflows/retention-prune.ts): a few batch statements of one
 * group per call, heartbeating after each, and the metrics of a finished run.
 */
export function createRetentionActivities(deps: { orm: Orm; config: RetentionConfig }) {
  const { config } = deps;
  const eventsSeconds = windowSeconds(config.RETENTION_EVENTS_SECONDS, config.RETENTION_EVENTS_DAYS);
  const notificationsSeconds = windowSeconds(
    config.RETENTION_PAYMENT_NOTIFICATIONS_SECONDS,
    config.RETENTION_PAYMENT_NOTIFICATIONS_DAYS,
  );
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
      const started = Date.now();
      let lastStatementMs = 0;
      while (!progress.done && progress.statements < STATEMENTS_PER_CALL && Date.now() - started < CALL_BUDGET_MS) {
        // Paced: after each statement the prune rests as long as the statement took, so it never
        // holds more than half of a connection and a core from the first attempts it runs beside.
        if (progress.statements > 0) await ctx.sleep(lastStatementMs);
        const statementStarted = Date.now();
        const counts = noRowsPruned();
        if (step.stage === 'events') {
          if (eventsSeconds === 0) return { ...progress, done: true };
          const batch = await pruneEventBatch(knex, {
            seconds: eventsSeconds,
            afterSeq: progress.afterSeq,
            limit: config.RETENTION_BATCH_SIZE,
          });
          Object.assign(counts, {
            events: batch.events,
            webhook_deliveries: batch.deliveries,
            webhook_attempts: batch.attempts,
          });
          progress.afterSeq = batch.afterSeq;
          progress.done = batch.done;
        } else if (step.stage === 'payment_notifications') {
          if (notificationsSeconds === 0) return { ...progress, done: true };
          counts.payment_notifications = await prunePaymentNotifications(
            knex,
            notificationsSeconds,
            config.RETENTION_BATCH_SIZE,
          );
          progress.done = counts.payment_notifications < config.RETENTION_BATCH_SIZE;
        } else {
          counts.idempotency_keys = await pruneExpiredIdempotencyKeys(knex, config.RETENTION_BATCH_SIZE);
          progress.done = counts.idempotency_keys < config.RETENTION_BATCH_SIZE;
        }
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
