import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Orm } from '../db/orm';
import type { Config } from '../lib/runtime/config';
import { logger } from '../lib/runtime/logger';
import { recordCommitmentSwept, recordDraftWoken } from '../lib/runtime/metrics';
import { draftTtlSeconds, sweepGraceSeconds } from '../lib/runtime/hold-windows';
import { commitmentsWithoutSubscription, overdueUnsigned, releaseNeverStarted } from '../db/offering-capacity';
import { subscriptionWorkflowId } from '../domain/subscription';
import { draftDeadline } from '../domain/subscription-messages';
import type { SweptCommitment } from '../domain/commitment-sweep';

/** Rows one call looks at at most; the next run takes the rest. */
const BATCH = 200;
/** How long one question to Temporal may take. */
const TEMPORAL_CALL_MS = 5000;

type SweepConfig = Pick<
  Config,
  | 'COMMITMENT_SWEEP_GRACE_MINUTES'
  | 'COMMITMENT_SWEEP_GRACE_SECONDS'
  | 'SUBSCRIPTION_DRAFT_TTL_DAYS'
  | 'SUBSCRIPTION_DRAFT_TTL_SECONDS'
>;

const within = <T>(client: Client, fn: () => Promise<T>) =>
  client.connection.withDeadline(Date.now() + TEMPORAL_CALL_MS, fn);

/**
 * The commitment sweep's activities (workflows/commitment-sweep.ts, docs/decisions/0371-commitment-sweep.md),
 * asking Temporal through the worker's own client. An outage fails the call, and the run retries it.
 */
export function createCommitmentSweepActivities(deps: { orm: Orm; config: SweepConfig }) {
  const knex = () => deps.orm.em.getConnection().getKnex();
  return {
    /**
     * Gives back each commitment older than the grace period whose subscription is neither recorded
     * nor known to Temporal: its create stopped between the hold and the workflow start (a crash, an
     * outage). One Temporal knows is its workflow's, even before its first projection.
     */
    async sweepStrandedCommitments(): Promise<{ examined: number; released: SweptCommitment[] }> {
      const ctx = Context.current();
      const candidates = await commitmentsWithoutSubscription(knex(), {
        olderThanSeconds: sweepGraceSeconds(deps.config),
        limit: BATCH,
      });
      const released: SweptCommitment[] = [];
      for (const subscriptionId of candidates) {
        const handle = ctx.client.workflow.getHandle(subscriptionWorkflowId(subscriptionId));
        const known = await within(ctx.client, () => handle.describe()).then(
          () => true,
          (err: unknown) => {
            if (err instanceof WorkflowNotFoundError) return false;
            throw err;
          },
        );
        if (!known) {
          const gave = await releaseNeverStarted(knex(), subscriptionId);
          if (gave) {
            released.push({ subscriptionId, ...gave });
            recordCommitmentSwept();
            logger.warn(
              { subscriptionId, offeringId: gave.offeringId, amount: gave.amount },
              'commitment of a create whose workflow never started given back',
            );
          }
        }
        ctx.heartbeat(released.length);
      }
      return { examined: candidates.length, released };
    },

    /**
     * Wakes each subscription still unsigned past the draft lifetime with its deadline, so one created
     * before drafts expired (no deadline, no timer) expires too, and one whose timer is late runs now.
     * A workflow that already ended is left alone.
     */
    async wakeOverdueDrafts(): Promise<number> {
      const ctx = Context.current();
      const overdue = await overdueUnsigned(knex(), { ttlSeconds: draftTtlSeconds(deps.config), limit: BATCH });
      let woken = 0;
      for (const d of overdue) {
        const handle = ctx.client.workflow.getHandle(subscriptionWorkflowId(d.subscriptionId));
        try {
          await within(ctx.client, () => handle.signal(draftDeadline, { expiresAt: d.expiresAt }));
          woken++;
          recordDraftWoken();
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
          logger.warn({ subscriptionId: d.subscriptionId }, 'an overdue unsigned subscription has no open workflow');
        }
        ctx.heartbeat(woken);
      }
      return woken;
    },
  };
}
