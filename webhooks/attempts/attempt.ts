import type { Knex } from '@mikro-orm/postgresql';
import type { AttemptInput, AttemptResult } from '../../domain/webhook-messages';
import { keyedTurns } from '../../lib/keyed-turns';
import { logger } from '../../lib/runtime/logger';
import { passGate, type Gate, type Send, type WorkflowShapeLimits } from './attempt-gate';
import { begunAttempts } from './begun-attempts';
import {
  claimAttempts,
  isSuccess,
  loadTargets,
  stopWaiting,
  type Finished,
  type Target,
} from '../deliveries/attempt-store';
import { IN_DOUBT_ERROR, type Recorder } from './result-recorder';
import { CIRCUIT_OPEN, notSent, type Sender } from '../egress/sender';
import { slotWaiters } from './slot-waiters';
import type { EndpointPacer } from './endpoint-pacer';
import type { UnclaimedStarts } from './unclaimed-starts';

/**
 * One attempt of a delivery on its retry schedule (workflows/webhook-delivery.ts), or of an
 * ordered one: the same sender and recorder as the dispatcher's first attempts, behind the same
 * circuit breaker and rate limit. The attempt's start is recorded before its POST; a replay by the
 * same owner finds its row and sends nothing again (docs/decisions/0151-attempt-recorded-before-post.md).
 */
export function attemptService(deps: {
  knex: () => Knex;
  sender: Sender;
  recorder: Recorder;
  /**
   * The process's pacing of rate-limited endpoints, shared with the dispatcher: an attempt starts no
   * earlier than a second after the POST `perSecond` places before it ended
   * (docs/decisions/0339-one-second-rule-at-the-gate.md).
   */
  pacer: EndpointPacer;
  /**
   * `workflow` shape: attempt 1 comes here too, so the endpoint's concurrency limit
   * (`max_in_flight`) holds here as the dispatcher's claim holds it in `engine` shape, and a
   * throttled attempt waits about as long as the endpoint's backlog takes to drain, so the
   * waiters of one endpoint ask again about as often as it can take them
   * (docs/decisions/0299-workflow-shape-limits.md). An organisation holding `orgMaxInFlight`
   * attempts is throttled likewise, so the worker's last slots stay free for the others
   * (docs/decisions/0334-workflow-shape-attempts-local.md).
   */
  workflowShape?: WorkflowShapeLimits;
  /**
   * `workflow` shape: tells a delivery held for a slot that one came free (webhooks/attempts/slot-waiters.ts);
   * absent until the worker runs, and in `engine` shape, where nothing is held.
   */
  wake?: (deliveryId: string) => void;
  /**
   * `workflow` shape: the start path's count of the deliveries started and not yet claimed
   * (webhooks/attempts/unclaimed-starts.ts), and its wake-up, for when an attempt's end leaves its endpoint room
   * (docs/decisions/0340-workflow-starts-within-the-endpoints-room.md).
   */
  unclaimed?: UnclaimedStarts;
  ended?: () => void;
}) {
  // The gate decides under the endpoint's flow row lock. Attempts to one endpoint take their turn
  // here before they take a pooled connection, so a burst's waiters never hold the pool that other
  // endpoints' attempts need (docs/decisions/0335-gate-turns-per-endpoint.md).
  const gateTurn = keyedTurns();
  const waiters = slotWaiters();

  async function attempt(input: AttemptInput): Promise<AttemptResult> {
    const knex = deps.knex();
    const t = (await loadTargets(knex, [input.deliveryId])).get(input.deliveryId);
    const answer = (
      outcome: AttemptResult['outcome'],
      from: Pick<Finished, 'responseStatus' | 'retryAfterMs'> = { responseStatus: null, retryAfterMs: null },
    ): AttemptResult => ({
      deliveryId: input.deliveryId,
      outcome,
      responseStatus: from.responseStatus,
      responseHeaders: null,
      retryAfterMs: from.retryAfterMs,
      endpointId: t?.endpoint_id ?? null,
      eventType: t?.event_type ?? null,
    });
    if (!t) {
      logger.warn({ deliveryId: input.deliveryId }, 'delivery not recorded; nothing to attempt');
      return answer('superseded');
    }
    // Asking again, woken or not: it holds no place among the waiters any more.
    waiters.leave(input.deliveryId);
    if (t.deleted_at) {
      await stopWaiting(knex, [t.delivery_id]);
      return answer('endpoint_deleted');
    }
    if (t.status === 'success') return answer('success');
    if (t.endpoint_status === 'disabled') {
      await stopWaiting(knex, [t.delivery_id]);
      return answer('endpoint_disabled');
    }

    const claim = (await claimAttempts(knex, [input])).get(input.deliveryId)!;
    // Claimed (or found claimed): the database counts it against its endpoint from now on.
    deps.unclaimed?.claimed(input.deliveryId);
    if (claim.kind === 'other_owner') return { ...answer('superseded'), numberTaken: true };
    if (claim.kind === 'recorded') return answer(isSuccess(claim.responseStatus) ? 'success' : 'failed', claim);
    let finished: Finished;
    if (claim.kind === 'in_doubt') {
      // This owner's attempt without a result: the worker died after claiming it, or its record is
      // still waiting in this process for the database.
      finished = deps.recorder.pending(input.owner, input.deliveryId, input.number) ?? notSent(input, IN_DOUBT_ERROR);
    } else {
      // A rate-limited attempt takes its place in the endpoint's pacing within its turn, so the
      // attempts of one endpoint are paced in the order the gate let them through.
      const gate = await gateTurn(t.endpoint_id, async (): Promise<Gate> => {
        const word = await passGate(knex, t, input.manual ?? false, input.reservedAt, deps.pacer, deps.workflowShape);
        return word.kind === 'send' && word.perSecond !== null
          ? { ...word, pacing: deps.pacer.paced(t.endpoint_id, Date.now() + word.delayMs, word.perSecond) }
          : word;
      });
      if (gate.kind === 'throttled') {
        // Not this attempt's turn: give the number back; the workflow sleeps until the start reserved for it.
        await knex('webhook_attempts')
          .where({ delivery_id: input.deliveryId, number: input.number, owner: input.owner })
          .whereNull('duration_ms')
          .delete();
        // A first attempt not yet under way still takes its endpoint's room from the start path.
        if (input.number === 1) deps.unclaimed?.add(input.deliveryId, t.endpoint_id);
        // Held for a slot: the attempt that frees one wakes it before its timer (docs/decisions/0337-held-attempts-woken.md).
        if (gate.full && deps.wake) waiters.hold(input.deliveryId, t.endpoint_id, t.org_id);
        return { ...answer('throttled'), retryAfterMs: gate.waitMs, reservedAt: gate.reservedAt };
      }
      if (gate.kind === 'held') finished = notSent(input, CIRCUIT_OPEN);
      else finished = await sendPaced(t, input, gate);
    }
    const recorded = await deps.recorder.record(finished, { endpointId: t.endpoint_id, publishedAt: t.occurred_at });
    // Its slot is free once its result is recorded (the gate counts attempts without one): the next waiter may have it.
    if (deps.wake) {
      const next = waiters.next(t.endpoint_id, t.org_id);
      if (next) deps.wake(next);
    }
    // `workflow` shape: the endpoint has room again for a queued delivery's start.
    deps.ended?.();
    if (recorded.endpointDisabled) return answer('endpoint_disabled', finished);
    return answer(isSuccess(finished.responseStatus) ? 'success' : 'failed', finished);
  }

  /** The POST of an attempt the gate let through, at its pace when its endpoint has a rate limit. */
  async function sendPaced(t: Target, input: AttemptInput, gate: Send): Promise<Finished> {
    if (!gate.pacing) return deps.sender.send(t, input);
    const ended = await gate.pacing;
    try {
      return await deps.sender.send(t, input);
    } finally {
      ended(Date.now());
    }
  }

  // The start path may begin attempt 1 of a run it started here; the run's local activity joins it.
  const calls = begunAttempts(attempt);
  return { attempt: calls.attempt, begin: calls.begin, idle: calls.idle };
}
