import { Context } from '@temporalio/activity';
import type { Orm } from '../db/orm';
import type { AttemptInput, AttemptResult, FirstAttemptsInput } from '../domain/webhook-messages';
import { ATTEMPT_DELAYS_MS } from '../domain/webhook-messages';
import { nextAttemptDelay, parseRetryAfter } from '../domain/endpoint-health';
import { noteAttemptOutcomes, type ObservedAttempt } from './endpoint-health';
import type { EventDispatcher } from './event-dispatcher';
import { logger } from '../lib/logger';
import { recordWebhookAttempt, recordWebhookDelivery } from '../lib/metrics';
import type { SsrfPolicy } from '../lib/ssrf-guard';
import {
  claimAttempts,
  isSuccess,
  loadTargets,
  recordResults,
  stopWaiting,
  type Claim,
  type Finished,
  type Target,
} from './webhook-attempt-store';
import { connectionFor, post, type Connection } from './webhook-post';
import { openingCache, type SecretBox } from './webhook-secret-box';
import { endpointKeys, signedRequest } from './webhook-signing';

const HEARTBEAT_EVERY_MS = 2000;
/** Bounds the memory of results kept across a database outage; beyond it they are recorded as in doubt. */
const MAX_UNRECORDED = 50_000;

/** The endpoint-health settings (lib/config.ts), in ms. */
export interface HealthSettings {
  retryAfterCapMs: number;
  failingPeriodMs: number;
}

/** What an attempt whose worker died between its POST and its record is recorded as. */
export const IN_DOUBT_ERROR = 'worker stopped before the result was recorded; the endpoint may have received it';

/**
 * Delivery attempts (spec §6.3–§6.5), one or a batch, always in three steps: record every
 * attempt's start (one transaction), POST them side by side, record every result (one
 * transaction). Each request is signed with the endpoint's CURRENT secret. Only the database
 * throws; every HTTP outcome, and any delivery that cannot be signed, is a recorded result.
 */
export function createAttemptActivities(deps: {
  orm: Orm;
  secrets: () => SecretBox;
  ssrf: () => SsrfPolicy;
  health: () => HealthSettings;
  dispatcher?: EventDispatcher;
}) {
  let box: SecretBox | undefined;
  let connection: Connection | undefined;
  // Results POSTed but not yet recorded (the database failed at the last step): the activity's retry
  // in this process records what really happened instead of "in doubt", and sends nothing again.
  const unrecorded = new Map<string, Finished>();
  const key = (i: AttemptInput) => `${i.owner}|${i.deliveryId}|${i.number}`;
  const knex = () => deps.orm.em.getConnection().getKnex();

  async function attempt(inputs: AttemptInput[]): Promise<AttemptResult[]> {
    const targets = await loadTargets(
      knex(),
      inputs.map((i) => i.deliveryId),
    );
    const results = new Map<string, AttemptResult>();
    const result = (
      i: AttemptInput,
      outcome: AttemptResult['outcome'],
      responseStatus: number | null = null,
      responseHeaders: Record<string, string> | null = null,
      retryAfterMs: number | null = null,
    ) => {
      const t = targets.get(i.deliveryId);
      results.set(i.deliveryId, {
        deliveryId: i.deliveryId,
        outcome,
        responseStatus,
        responseHeaders,
        retryAfterMs,
        endpointId: t?.endpoint_id ?? null,
        eventType: t?.event_type ?? null,
      });
    };

    const live: AttemptInput[] = [];
    const deleted: string[] = [];
    const disabled: string[] = [];
    for (const i of inputs) {
      const t = targets.get(i.deliveryId);
      if (!t) {
        logger.warn({ deliveryId: i.deliveryId }, 'delivery not recorded; nothing to attempt');
        result(i, 'superseded');
      } else if (t.deleted_at) {
        deleted.push(i.deliveryId);
        result(i, 'endpoint_deleted');
      } else if (t.status === 'success') result(i, 'success');
      else if (t.endpoint_status === 'disabled') {
        disabled.push(i.deliveryId);
        result(i, 'endpoint_disabled');
      } else live.push(i);
    }
    await stopWaiting(knex(), [...deleted, ...disabled]);
    for (const _ of deleted) recordWebhookDelivery('endpoint_deleted');

    const claims = await claimAttempts(knex(), live);
    const finished: Finished[] = [];
    const posts: Promise<void>[] = [];
    for (const i of live) {
      const claim = claims.get(i.deliveryId)!;
      if (claim.kind === 'other_owner') result(i, 'superseded');
      else if (claim.kind === 'recorded')
        result(
          i,
          isSuccess(claim.responseStatus) ? 'success' : 'failed',
          claim.responseStatus,
          null,
          claim.retryAfterMs,
        );
      else if (claim.kind === 'in_doubt') {
        const known = unrecorded.get(key(i));
        finished.push(
          known ?? {
            input: i,
            durationMs: null,
            responseStatus: null,
            responseBody: null,
            error: IN_DOUBT_ERROR,
            retryAfterMs: null,
          },
        );
        result(
          i,
          known && isSuccess(known.responseStatus) ? 'success' : 'failed',
          known?.responseStatus ?? null,
          null,
          known?.retryAfterMs ?? null,
        );
      } else {
        posts.push(
          send(targets.get(i.deliveryId)!, i).then((f) => {
            const { responseStatus, retryAfterMs } = f.finished;
            // The record's next_attempt_at shows the wait the workflow will decide from this result.
            f.finished.input = { ...i, nextDelayMs: nextAttemptDelay(i.nextDelayMs, responseStatus, retryAfterMs) };
            finished.push(f.finished);
            result(i, isSuccess(responseStatus) ? 'success' : 'failed', responseStatus, f.headers, retryAfterMs);
          }),
        );
      }
    }
    await Promise.all(posts);
    if (unrecorded.size < MAX_UNRECORDED) for (const f of finished) unrecorded.set(key(f.input), f);
    await recordResults(knex(), finished);
    for (const f of finished) unrecorded.delete(key(f.input));
    for (const f of finished) countAttempt(f, targets.get(f.input.deliveryId)!);
    await applyHealth(inputs, targets, claims, finished, results);
    return inputs.map((i) => results.get(i.deliveryId)!);
  }

  /**
   * After the results are recorded (so a crash here loses no attempt): the endpoints' answers may
   * disable them (a 410, or failing too long); their failed deliveries then end, waiting for
   * nothing. A replay that finds its results recorded notes them again: the notes are idempotent,
   * so a crash between the record and this step cannot lose a 410.
   */
  async function applyHealth(
    inputs: AttemptInput[],
    targets: Map<string, Target>,
    claims: Map<string, Claim>,
    finished: Finished[],
    results: Map<string, AttemptResult>,
  ): Promise<void> {
    const observed: (ObservedAttempt & { deliveryId: string })[] = [];
    const at = (i: AttemptInput) => new Date(i.attemptedAt);
    for (const f of finished) {
      // An attempt in doubt says nothing about the endpoint.
      if (f.error === IN_DOUBT_ERROR) continue;
      observed.push({
        deliveryId: f.input.deliveryId,
        endpointId: targets.get(f.input.deliveryId)!.endpoint_id,
        status: f.responseStatus,
        at: at(f.input),
      });
    }
    for (const i of inputs) {
      const claim = claims.get(i.deliveryId);
      if (claim?.kind === 'recorded')
        observed.push({
          deliveryId: i.deliveryId,
          endpointId: targets.get(i.deliveryId)!.endpoint_id,
          status: claim.responseStatus,
          at: at(i),
        });
    }
    if (!observed.length) return;
    const { failingPeriodMs } = deps.health();
    const gone = await noteAttemptOutcomes({ orm: deps.orm, dispatcher: deps.dispatcher, failingPeriodMs }, observed);
    if (!gone.size) return;
    const ended: string[] = [];
    for (const r of results.values()) {
      if (r.outcome === 'failed' && r.endpointId && gone.has(r.endpointId)) {
        r.outcome = 'endpoint_disabled';
        ended.push(r.deliveryId);
      }
    }
    await stopWaiting(knex(), ended);
  }

  async function send(
    t: Target,
    input: AttemptInput,
  ): Promise<{ finished: Finished; headers: Record<string, string> | null }> {
    let request;
    try {
      request = signedRequest(endpointKeys((box ??= openingCache(deps.secrets())), t), t.body, {
        eventId: t.event_id,
        eventType: t.event_type,
        deliveryId: input.deliveryId,
        timestamp: new Date(t.occurred_at).toISOString(),
      });
    } catch (err) {
      // A poison delivery (a secret that no longer opens) is a recorded failure, not a wedged batch.
      logger.error({ deliveryId: input.deliveryId, err: (err as Error).message }, 'delivery could not be signed');
      return {
        finished: {
          input,
          durationMs: 0,
          responseStatus: null,
          responseBody: null,
          error: 'SIGNING_FAILED',
          retryAfterMs: null,
        },
        headers: null,
      };
    }
    const res = await post(t.url, request, (connection ??= connectionFor(deps.ssrf())));
    const retryAfterMs =
      res.status === null
        ? null
        : parseRetryAfter(res.headers?.['retry-after'], new Date(), deps.health().retryAfterCapMs);
    return {
      finished: {
        input,
        durationMs: res.durationMs,
        responseStatus: res.status,
        responseBody: res.body,
        error: res.error,
        retryAfterMs,
      },
      headers: res.headers,
    };
  }

  return {
    /** One attempt of a delivery waiting on its schedule (workflows/webhook-delivery.ts). */
    async attemptDelivery(input: AttemptInput): Promise<AttemptResult> {
      const [res] = await attempt([input]);
      return res!;
    },
    /**
     * Attempt 1 of every delivery in a batch (workflows/delivery-batcher.ts). Returns only the
     * failed ones, which need a schedule: the batcher's history carries no line per success.
     */
    async firstAttempts(input: FirstAttemptsInput): Promise<AttemptResult[]> {
      const ids = [...new Set(input.deliveryIds)];
      // Heartbeats let Temporal see a dead worker within the heartbeat timeout, not after the 2 min
      // start-to-close: the batch then runs again and closes its in-doubt attempts.
      const context = Context.current();
      const beat = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
      try {
        const results = await attempt(
          ids.map((deliveryId) => ({
            deliveryId,
            number: 1,
            attemptedAt: input.attemptedAt,
            nextDelayMs: ATTEMPT_DELAYS_MS[1],
            owner: input.batchId,
          })),
        );
        return results.filter((r) => r.outcome === 'failed');
      } finally {
        clearInterval(beat);
      }
    },
  };
}

// Counted once per recorded result: a replay that finds its own recorded row counts nothing again.
function countAttempt(f: Finished, t: Target): void {
  const ok = isSuccess(f.responseStatus);
  recordWebhookAttempt(ok ? 'success' : 'failed', f.responseStatus);
  if (ok) recordWebhookDelivery('success', t.occurred_at);
  else if (f.input.nextDelayMs === null && f.input.number >= ATTEMPT_DELAYS_MS.length)
    recordWebhookDelivery('exhausted');
}
