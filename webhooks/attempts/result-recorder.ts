import type { Knex } from '@mikro-orm/postgresql';
import type { BehaviourSet } from '../../lib/behaviour-set';
import { tooSlow, type CircuitRules } from '../../domain/circuit-breaker';
import { logger } from '../../lib/runtime/logger';
import {
  recordProxyFailure,
  recordResultSetAside,
  recordWebhookAttempt,
  recordWebhookDelivery,
} from '../../lib/runtime/metrics';
import { isSuccess, recordResults, recordSuccesses, stopWaiting, type Finished } from '../deliveries/attempt-store';
import { disableEndpoint, noteAttemptOutcomes, type ObservedAttempt } from '../endpoints/endpoint-health-store';
import { endFailingSpells, publishExhausted } from '../events/operational-events';
import { CIRCUIT_OPEN, SIGNING_FAILED } from '../egress/sender';
import { circuitsClosed, updateCircuits } from '../endpoints/circuit-store';
import { isProxyFailure } from '../egress/proxy-connect';
import { ATTEMPT_DELAYS_MS, AUTOMATIC_ATTEMPTS, nextAttemptDelay } from '../../domain/retry-schedule';

/** What an attempt whose worker died between its POST and its record is recorded as. */
export const IN_DOUBT_ERROR = 'worker stopped before the result was recorded; the endpoint may have received it';

interface Recorded {
  /** The endpoint was disabled by this answer (a 410, or failing too long): nothing follows. */
  endpointDisabled: boolean;
}

interface RecordOptions {
  endpointId: string;
  /** When the event was published: a success observes publish-to-delivery time. */
  publishedAt?: Date | string;
  /** A first attempt made outside any workflow: when it failed, its retry schedule is handed to Temporal. */
  handOver?: { eventType: string };
}

export interface Recorder {
  /** Resolves once the result is committed; a database outage only delays it. */
  record(result: Finished, opts: RecordOptions): Promise<Recorded>;
  /** A result handed over but not yet committed, by owner, delivery and attempt number. */
  pending(owner: string, deliveryId: string, number: number): Finished | undefined;
  /** Called after each commit that handed failed deliveries over. */
  onHandOver(listener: () => void): void;
  /** Waits for everything handed over to be committed. */
  drain(): Promise<void>;
}

interface Item {
  result: Finished;
  opts: RecordOptions;
  resolve(r: Recorded): void;
}

const MAX_PER_COMMIT = 500;
const UNOBSERVED = new Set([IN_DOUBT_ERROR, CIRCUIT_OPEN, SIGNING_FAILED]);

/**
 * Every attempt's result is recorded here, by group commit (docs/decisions/0231-group-commit-in-the-api.md):
 * a result is written as soon as the commit before it has ended, with whatever other results ended meanwhile,
 * in one transaction: the attempt rows, the deliveries' status, the endpoints' circuit breakers and "failing
 * since", the endpoints a 410 or a long failure disables, and the failed first attempts' hand-over to their
 * retry schedule. No result waits for another POST. A failed commit while the database is down keeps the
 * results in memory and tries again, 1 s to 30 s apart, so nothing is lost while the process lives; a process
 * that dies leaves its attempts in flight for the sweep to close. A commit the database refuses while it
 * answers is halved until the result it cannot take stands alone, which is set aside and retried on its own
 * (docs/decisions/0292-a-bad-result-is-set-aside.md).
 */
export function createRecorder(deps: {
  knex: () => Knex;
  set: BehaviourSet;
  failingPeriodMs: number;
  /** Failed attempts in a row that publish `webhook.endpoint.failing` (docs/decisions/0415-operational-events.md). */
  failingAfterAttempts: number;
  circuit: CircuitRules;
}): Recorder {
  const queue: Item[] = [];
  const byKey = new Map<string, Finished>();
  const listeners: (() => void)[] = [];
  let flushing: Promise<void> | null = null;
  const key = (owner: string, deliveryId: string, number: number) => `${owner}|${deliveryId}|${number}`;

  function kick(): void {
    if (flushing || queue.length === 0) return;
    flushing = flush().finally(() => {
      flushing = null;
      kick();
    });
  }

  async function flush(): Promise<void> {
    let backoff = 1000;
    while (queue.length) {
      const batch = queue.slice(0, MAX_PER_COMMIT);
      try {
        await commit(batch);
      } catch (err) {
        if (await databaseAnswers()) {
          // The database is up and refused this batch: some result in it cannot be recorded. Halve
          // it until the bad ones stand alone; they are set aside and the rest go on.
          queue.splice(0, batch.length);
          await bisect(batch, err);
          backoff = 1000;
          continue;
        }
        logger.warn({ err, count: batch.length }, 'recording attempt results failed; retrying');
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 30_000);
        continue;
      }
      queue.splice(0, batch.length);
    }
  }

  /** Writes a batch and settles its items; throws, settling nothing, when the write fails. */
  async function commit(batch: readonly Item[]): Promise<void> {
    const outcome = await write(batch);
    for (const item of batch) {
      byKey.delete(key(item.result.input.owner, item.result.input.deliveryId, item.result.input.number));
      countAttempt(item.result, item.opts.endpointId, item.opts.publishedAt);
      item.resolve(outcome.get(item)!);
    }
    // Only a failed first attempt leaves a hand-over row; a batch of successes costs no hand-over call.
    if (batch.some((i) => i.opts.handOver && !isSuccess(i.result.responseStatus))) for (const l of listeners) l();
  }

  /** A refused batch, halved until each part commits or is one result, which is set aside. */
  async function bisect(batch: readonly Item[], err: unknown): Promise<void> {
    if (batch.length === 1) return setAside(batch[0]!, err);
    const half = Math.ceil(batch.length / 2);
    for (const part of [batch.slice(0, half), batch.slice(half)]) {
      try {
        await commit(part);
      } catch (partErr) {
        await bisect(part, partErr);
      }
    }
  }

  /**
   * One result the database refuses on its own: logged, counted, and retried alone with a growing
   * wait (up to 5 minutes), so it never holds up another organisation's results. Its attempt row
   * stays open meanwhile; should the process end first, the sweep closes it as in doubt.
   */
  function setAside(item: Item, err: unknown, waitMs = 1000): void {
    const { deliveryId, number, owner } = item.result.input;
    logger.error(
      { err, deliveryId, number, owner, waitMs },
      'attempt result could not be recorded on its own; set aside and retried alone',
    );
    if (waitMs === 1000) recordResultSetAside();
    const timer = setTimeout(() => {
      commit([item]).catch((again: unknown) => setAside(item, again, Math.min(waitMs * 2, 300_000)));
    }, waitMs);
    timer.unref();
  }

  async function databaseAnswers(): Promise<boolean> {
    try {
      await deps.knex().raw('select 1');
      return true;
    } catch {
      return false;
    }
  }

  async function write(batch: readonly Item[]): Promise<Map<Item, Recorded>> {
    const results = batch.map((i) => i.result);
    // A 2xx that took most of the 30 s counts against the endpoint's health: not the hot path's.
    if (results.every((r) => isSuccess(r.responseStatus) && !tooSlow(r.durationMs))) {
      // The hot path: one statement, no transaction around it.
      const rows = await recordSuccesses(
        deps.knex(),
        results,
        batch.map((i) => i.opts.endpointId),
      );
      circuitsClosed(rows.filter((r) => r.kind === 'closed'));
      const reported = new Set(rows.filter((r) => r.kind === 'reported').map((r) => r.endpoint_id));
      if (reported.size) await recovered(batch.filter((i) => reported.has(i.opts.endpointId)));
      return new Map(batch.map((i) => [i, { endpointDisabled: false }]));
    }
    return deps.knex().transaction(async (trx) => {
      await recordResults(trx, results);
      // What the endpoint itself answered: not an attempt in doubt, one never sent, one we could not sign,
      // or one our egress proxy failed (docs/decisions/0405-egress-through-a-connect-proxy.md): those are
      // retried on schedule, but count neither for the circuit nor towards failing and disabling.
      const observed = batch
        .filter((i) => !UNOBSERVED.has(i.result.error ?? '') && !isProxyFailure(i.result.error))
        .map((i) => ({
          item: i,
          endpointId: i.opts.endpointId,
          status: i.result.responseStatus,
          durationMs: i.result.durationMs,
        }));
      await updateCircuits(trx, observed, deps.circuit);
      const disabled = await noteAttemptOutcomes(
        trx,
        { set: deps.set, failingPeriodMs: deps.failingPeriodMs, failingAfterAttempts: deps.failingAfterAttempts },
        observed.map<ObservedAttempt>((o) => ({
          endpointId: o.endpointId,
          status: o.status,
          at: new Date(o.item.result.input.attemptedAt),
          slow: tooSlow(o.durationMs),
        })),
      );
      for (const [endpointId, { reason, at }] of disabled) await disableEndpoint(trx, deps.set, endpointId, reason, at);
      const outcome = new Map<Item, Recorded>();
      const handOvers: {
        delivery_id: string;
        endpoint_id: string;
        event_type: string;
        first_delay_ms: number | null;
      }[] = [];
      const ended: string[] = [];
      for (const item of batch) {
        const r = item.result;
        const endpointDisabled = disabled.has(item.opts.endpointId) && !isSuccess(r.responseStatus);
        outcome.set(item, { endpointDisabled });
        if (endpointDisabled) ended.push(r.input.deliveryId);
        else if (item.opts.handOver && !isSuccess(r.responseStatus)) {
          const wait = nextAttemptDelay(ATTEMPT_DELAYS_MS[1], r.responseStatus, r.retryAfterMs);
          handOvers.push({
            delivery_id: r.input.deliveryId,
            endpoint_id: item.opts.endpointId,
            event_type: item.opts.handOver.eventType,
            first_delay_ms: wait !== null && wait !== ATTEMPT_DELAYS_MS[1] ? wait : null,
          });
        }
      }
      await stopWaiting(trx, ended);
      // Only a failure at or past the last automatic attempt can have exhausted its delivery: the
      // usual failed batch costs no query here.
      await publishExhausted(
        trx,
        deps.set,
        batch
          .filter((i) => !isSuccess(i.result.responseStatus) && i.result.input.number >= AUTOMATIC_ATTEMPTS)
          .map((i) => i.result.input.deliveryId),
      );
      if (handOvers.length)
        await trx('webhook_schedule_handovers').insert(handOvers).onConflict('delivery_id').ignore();
      return outcome;
    });
  }

  /**
   * The hot path's successes of endpoints whose failing spell was reported (rare): their spell ends
   * and `webhook.endpoint.recovered` is published, in a transaction of their own after the results
   * committed. Should it fail, the spell stays reported and the endpoint's next success ends it, so
   * it is logged and the results stand.
   */
  async function recovered(items: readonly Item[]): Promise<void> {
    const at = new Map<string, Date>();
    for (const i of items) {
      const t = new Date(i.result.input.attemptedAt);
      if (!at.has(i.opts.endpointId) || at.get(i.opts.endpointId)! < t) at.set(i.opts.endpointId, t);
    }
    try {
      await deps.knex().transaction((trx) => endFailingSpells(trx, deps.set, at));
    } catch (err) {
      logger.warn({ err, endpoints: [...at.keys()] }, 'ending failing spells failed; the next success ends them');
    }
  }

  return {
    record(result, opts) {
      byKey.set(key(result.input.owner, result.input.deliveryId, result.input.number), result);
      return new Promise<Recorded>((resolve) => {
        queue.push({ result, opts, resolve });
        kick();
      });
    },
    pending: (owner, deliveryId, number) => byKey.get(key(owner, deliveryId, number)),
    onHandOver: (listener) => void listeners.push(listener),
    async drain() {
      while (flushing) await flushing;
    },
  };
}

// Counted once per recorded result.
function countAttempt(f: Finished, endpointId: string, publishedAt: Date | string | undefined): void {
  if (f.error === CIRCUIT_OPEN) return; // not an attempt the endpoint saw
  if (isProxyFailure(f.error)) {
    // Seen as the proxy's, not the endpoint's: counted and logged, so an outage of the proxy shows.
    recordProxyFailure();
    logger.warn(
      { endpointId, deliveryId: f.input.deliveryId, number: f.input.number, error: f.error },
      'webhook attempt failed at the egress proxy; not counted against the endpoint',
    );
  }
  const ok = isSuccess(f.responseStatus);
  recordWebhookAttempt(ok ? 'success' : 'failed', f.responseStatus, f.durationMs);
  if (ok) recordWebhookDelivery('success', publishedAt);
  else if (f.input.nextDelayMs === null && f.input.number >= AUTOMATIC_ATTEMPTS) recordWebhookDelivery('exhausted');
}
