import type { Knex } from '@mikro-orm/postgresql';
import { admission, PROBE_HOLD_MS, type CircuitState } from '../domain/circuit-breaker';
import type { AttemptInput, AttemptResult } from '../domain/webhook-messages';
import { logger } from '../lib/logger';
import { claimAttempts, isSuccess, loadTargets, stopWaiting, type Finished, type Target } from './attempt-store';
import { IN_DOUBT_ERROR, type Recorder } from './recorder';
import { CIRCUIT_OPEN, notSent, type Sender } from './sender';

/** What the endpoint's circuit and rate limit allow one scheduled attempt. */
type Gate = { kind: 'send' } | { kind: 'held' } | { kind: 'throttled'; waitMs: number };

/**
 * One attempt of a delivery on its retry schedule (workflows/webhook-delivery.ts), or of an
 * ordered one: the same sender and recorder as the dispatcher's first attempts, behind the same
 * circuit breaker and rate limit. The attempt's start is recorded before its POST; a replay by the
 * same owner finds its row and sends nothing again (docs/decisions.md, Delivery engine).
 */
export function attemptService(deps: { knex: () => Knex; sender: Sender; recorder: Recorder }) {
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
    if (claim.kind === 'other_owner') return answer('superseded');
    if (claim.kind === 'recorded')
      return answer(isSuccess(claim.responseStatus) ? 'success' : 'failed', claim);
    let finished: Finished;
    if (claim.kind === 'in_doubt') {
      // This owner's attempt without a result: the worker died after claiming it, or its record is
      // still waiting in this process for the database.
      finished = deps.recorder.pending(input.owner, input.deliveryId, input.number) ?? notSent(input, IN_DOUBT_ERROR);
    } else {
      const gate = await pass(knex, t);
      if (gate.kind === 'throttled') {
        // Not this attempt's turn: give the number back, and the workflow waits for a token.
        await knex('webhook_attempts').where({ delivery_id: input.deliveryId, number: input.number, owner: input.owner }).whereNull('duration_ms').delete();
        return { ...answer('throttled'), retryAfterMs: gate.waitMs };
      }
      finished = gate.kind === 'held' ? notSent(input, CIRCUIT_OPEN) : await deps.sender.send(t, input);
    }
    const recorded = await deps.recorder.record(finished, { endpointId: t.endpoint_id, publishedAt: t.occurred_at });
    if (recorded.endpointDisabled) return answer('endpoint_disabled', finished);
    return answer(isSuccess(finished.responseStatus) ? 'success' : 'failed', finished);
  }

  return { attempt };
}

/**
 * The endpoint's circuit breaker and rate limit, for one attempt: an open circuit holds it (it is
 * recorded as a failed attempt, nothing sent) unless its probe is due, which it then takes; a
 * rate limit with no token left throttles it. Endpoints with neither cost one read.
 */
async function pass(knex: Knex, t: Target): Promise<Gate> {
  return knex.transaction(async (trx) => {
    const row:
      | {
          circuit_state: CircuitState;
          probe_at: Date | null;
          rate_limit_per_second: number | null;
          tokens: number | null;
          now: Date;
        }
      | undefined = (
      await trx.raw(
        `select f.circuit_state, f.probe_at, e.rate_limit_per_second, now() as now,
                case when e.rate_limit_per_second is null then null
                     else least(e.rate_limit_per_second::float8, coalesce(f.tokens, e.rate_limit_per_second)
                                + e.rate_limit_per_second * extract(epoch from now() - f.refilled_at)) end as tokens
           from webhook_endpoint_flow f join webhook_endpoints e on e.id = f.endpoint_id
          where f.endpoint_id = ? for update of f`,
        [t.endpoint_id],
      )
    ).rows[0];
    if (!row) return { kind: 'send' };
    const now = new Date(row.now);
    const word = admission({ state: row.circuit_state, probeAt: row.probe_at && new Date(row.probe_at) }, now);
    if (word === 'hold') return { kind: 'held' };
    const tokens = row.tokens === null ? null : Number(row.tokens);
    if (tokens !== null && tokens < 1)
      return { kind: 'throttled', waitMs: Math.ceil(((1 - tokens) / row.rate_limit_per_second!) * 1000) };
    if (tokens === null && word === 'send') return { kind: 'send' };
    await trx('webhook_endpoint_flow')
      .where({ endpoint_id: t.endpoint_id })
      .update({
        ...(tokens !== null && { tokens: tokens - 1, refilled_at: trx.fn.now() }),
        ...(word === 'probe' && {
          circuit_state: 'half_open',
          probe_at: trx.raw(`now() + (? * interval '1 millisecond')`, [PROBE_HOLD_MS]),
        }),
      });
    return { kind: 'send' };
  });
}
