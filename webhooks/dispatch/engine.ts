import type { Client } from '@temporalio/client';
import type { Orm } from '../../db/orm';
import type { AttemptInput, AttemptResult } from '../../domain/webhook-messages';
import type { Config } from '../../lib/runtime/config';
import { logger } from '../../lib/runtime/logger';
import { hopLogOf, hopNow } from '../../lib/runtime/hop-log';
import { policyFromConfig } from '../../lib/runtime/ssrf-guard';
import { createHostResolver, resolverOptionsFromConfig } from '../../lib/runtime/dns-resolver';
import { orgShareOf } from '../../domain/attempt-slots';
import { attemptService } from '../attempts/attempt';
import { recordSuccesses } from '../deliveries/attempt-store';
import { createDispatcher } from './dispatcher';
import { endpointPacer } from '../attempts/endpoint-pacer';
import { handOverOrdered, handOverRetries, type HandOverDeps } from './handover';
import { startListener } from './listener';
import { createRecorder } from '../attempts/result-recorder';
import { secretBoxFrom } from '../secrets/secret-box';
import { createSender } from '../egress/sender';
import { wakeWaiter } from '../attempts/slot-waiters';
import { personalKeys } from '../../db/personal-keys';
import { sweep } from './sweep';
import { startQueuedDeliveries, type StartPath } from './workflow-shape';
import { unclaimedStarts } from '../attempts/unclaimed-starts';
import { stopDeletedEndpoints } from '../endpoints/deleted-endpoints';

/** Deliveries of one endpoint one round takes at most: a fan-out of many endpoints shares a round. */
const PER_ENDPOINT_PER_ROUND = 256;
/** Failed first attempts wait this long for their hand-over's own call before the sweep makes it. */
const HANDOVER_GRACE_MS = 5000;
/** Pages of a deleted endpoint's deliveries one sweep stops at most (webhooks/endpoints/deleted-endpoints.ts). */
const DELETED_PAGES_PER_SWEEP = 5;

interface EngineRun {
  temporal: Client;
  taskQueue: string;
  /**
   * `temporal` shares its NativeConnection with a worker polling `taskQueue` in this process: a
   * delivery workflow the `workflow` shape starts then asks for its first task to come straight
   * back to that worker, skipping the server's task queue (docs/decisions/0331-eager-delivery-starts.md).
   * A function is asked at each start: a versioned worker's version must be one new workflows are routed to
   * (worker/deployment-routing.ts).
   */
  eagerStarts?: boolean | (() => boolean);
}

export interface DeliveryEngine {
  /** One scheduled attempt of a delivery (the delivery workflow's local activity). */
  attempt(input: AttemptInput): Promise<AttemptResult>;
  /** Starts this process's dispatcher, its listener and the sweep: what a worker runs. */
  start(run: EngineRun): Promise<RunningEngine>;
}

export interface RunningEngine {
  /**
   * Pays what the first deliveries would otherwise pay (docs/decisions/0302-warm-before-ready.md):
   * opens pool connections, prepares the record statements, runs the first claim round. Answers
   * each part and how long it took.
   */
  warmUp(): Promise<{ part: string; ms: number }[]>;
  /** Tells every API that this worker is warm: its dispatcher session takes the warm lock. */
  markWarm(): Promise<void>;
  /** Stops taking deliveries, lets the POSTs in flight finish and records them. */
  stop(): Promise<void>;
}

/** Pool connections a warm-up opens at once: enough for a claim round, its POSTs' records and a sweep side by side. */
const WARM_CONNECTIONS = 4;

/**
 * The webhook delivery engine of one process (docs/decisions/0173-dispatcher-engine-shape.md): one
 * sender (connection pool, opened secrets), one recorder (group commit), and, in a worker, the
 * dispatcher that makes every first attempt straight from the queue.
 */
export function createDeliveryEngine(deps: { orm: Orm; config: Config }): DeliveryEngine {
  const { config } = deps;
  const knex = () => deps.orm.em.getConnection().getKnex();
  const sender = createSender({
    secrets: secretBoxFrom(config),
    ssrf: policyFromConfig(config),
    // The process's one resolver: c-ares, its own timeout, never the libuv pool (decision 0274).
    resolver: createHostResolver(resolverOptionsFromConfig(config)),
    retryAfterCapMs: config.WEBHOOK_RETRY_AFTER_CAP_SECONDS * 1000,
    ...(config.WEBHOOK_HTTP_PROXY && {
      egress: { proxy: config.WEBHOOK_HTTP_PROXY, noProxy: config.WEBHOOK_NO_PROXY },
    }),
    personal: personalKeys(knex, config.PERSONAL_DATA_KEYS),
  });
  const recorder = createRecorder({
    knex,
    set: config.BEHAVIOUR_SET,
    failingPeriodMs: config.WEBHOOK_DISABLE_AFTER_FAILING_SECONDS * 1000,
    failingAfterAttempts: config.WEBHOOK_FAILING_AFTER_ATTEMPTS,
    circuit: {
      failures: config.WEBHOOK_CIRCUIT_FAILURES,
      cooldownMs: config.WEBHOOK_CIRCUIT_COOLDOWN_SECONDS * 1000,
      maxCooldownMs: config.WEBHOOK_CIRCUIT_COOLDOWN_SECONDS * 16_000,
    },
  });
  // The worker's client, once it runs: held deliveries are woken through it (webhooks/attempts/slot-waiters.ts).
  let temporal: Client | undefined;
  // One pacing of rate-limited endpoints for the dispatcher's first attempts and the gate's.
  const pacer = endpointPacer();
  // `workflow` shape: the start path's count of its starts no attempt has claimed yet, and its wake-up,
  // which an attempt's end calls once the worker runs (docs/decisions/0340-workflow-starts-within-the-endpoints-room.md).
  const unclaimed = unclaimedStarts();
  let startMore: (() => void) | undefined;
  const attempts = attemptService({
    knex,
    sender,
    recorder,
    pacer,
    ...(config.WEBHOOK_DELIVERY_SHAPE === 'workflow' && {
      workflowShape: {
        defaultMaxInFlight: config.WEBHOOK_DEFAULT_MAX_IN_FLIGHT,
        orgMaxInFlight: orgShareOf(config.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS),
      },
      wake: (deliveryId: string) => temporal && wakeWaiter(temporal, deliveryId),
      unclaimed,
      ended: () => startMore?.(),
    }),
  });
  const startPath: StartPath = {
    unclaimed,
    defaultMaxInFlight: config.WEBHOOK_DEFAULT_MAX_IN_FLIGHT,
    beginFirstAttempt: attempts.begin,
  };

  return {
    attempt: (input) => attempts.attempt(input),

    async start(run) {
      temporal = run.temporal;
      const handOverDeps: HandOverDeps = {
        knex,
        temporal: run.temporal,
        taskQueue: run.taskQueue,
        shards: config.WEBHOOK_SCHEDULER_SHARDS,
        eagerStarts: run.eagerStarts,
      };
      const retries = singleFlight('retry hand-over', async (olderThanMs: number) => {
        while ((await handOverRetries(handOverDeps, olderThanMs)) > 0);
      });
      const ordered = singleFlight('ordered hand-over', async () => {
        while ((await handOverOrdered(handOverDeps)) > 0);
      });
      // `workflow` shape: queued deliveries become delivery workflows instead of dispatcher POSTs
      // (docs/decisions/0297-webhook-delivery-shape-as-a-setting.md).
      const asWorkflows = config.WEBHOOK_DELIVERY_SHAPE === 'workflow';
      // Where the start path's walk over endpoints left off: each call goes on from there.
      const walk = { after: '00000000-0000-0000-0000-000000000000' };
      const starting = singleFlight('delivery workflow start', async () => {
        while ((await startQueuedDeliveries(handOverDeps, startPath, walk)) > 0);
      });
      if (asWorkflows) startMore = () => starting.run(0);
      let dispatcher: ReturnType<typeof createDispatcher> | undefined;
      const hops = hopLogOf(config.WEBHOOK_HOP_LOG_DIR, 'worker');
      const firstAttempts = () => (asWorkflows ? starting.run(0) : dispatcher?.wake());
      const listener = await startListener({
        databaseUrl: config.DATABASE_URL,
        onWake: (payload) => {
          if (hops?.on) hops.mark({ w: hopNow() });
          firstAttempts();
          if (payload === 'ordered') ordered.run(0);
        },
      });
      dispatcher = createDispatcher({
        knex,
        owner: () => listener.owner,
        sender,
        recorder,
        pacer,
        hops,
        settings: {
          maxInFlight: config.WEBHOOK_DISPATCH_MAX_IN_FLIGHT,
          perEndpoint: PER_ENDPOINT_PER_ROUND,
          endpointsPerRound: config.WEBHOOK_DISPATCH_ENDPOINTS_PER_ROUND,
          defaultMaxInFlight: config.WEBHOOK_DEFAULT_MAX_IN_FLIGHT,
        },
      });
      recorder.onHandOver(() => retries.run(0));
      const sweeping = singleFlight('sweep', async () => {
        await sweep({
          knex,
          set: config.BEHAVIOUR_SET,
          recorder,
          graceMs: config.OUTBOX_RELAY_GRACE_MS,
          stuckAfterMs: config.WEBHOOK_STUCK_AFTER_MS,
        });
        firstAttempts();
        ordered.run(0);
        retries.run(HANDOVER_GRACE_MS);
        deleted.run(0);
      });
      // A few pages a sweep: a deleted endpoint's backlog never holds up the sweep's other work.
      const deleted = singleFlight('deleted endpoints', async () => {
        for (let page = 0; page < DELETED_PAGES_PER_SWEEP; page++)
          if ((await stopDeletedEndpoints({ knex, temporal: run.temporal })) === 0) break;
      });
      const timer = setInterval(() => sweeping.run(0), config.WEBHOOK_SWEEP_INTERVAL_MS);
      // Whatever was queued while no dispatcher ran.
      firstAttempts();
      ordered.run(0);
      // The proxy as host:port, never its credentials.
      logger.info(
        {
          owner: listener.owner,
          shape: config.WEBHOOK_DELIVERY_SHAPE,
          egressProxy: config.WEBHOOK_HTTP_PROXY ? config.WEBHOOK_HTTP_PROXY.address : 'none (direct)',
        },
        'delivery engine started',
      );
      return {
        async warmUp() {
          const parts: { part: string; ms: number }[] = [];
          const timed = async (part: string, step: () => Promise<unknown>) => {
            const t0 = performance.now();
            await step();
            parts.push({ part, ms: Math.round((performance.now() - t0) * 10) / 10 });
          };
          // Held open together, so the pool makes that many connections now rather than under the first load.
          await timed('database_pool', () =>
            Promise.all(Array.from({ length: WARM_CONNECTIONS }, () => knex().raw('select pg_sleep(0.05)'))),
          );
          // Recording nothing prepares the success path's statement on each of those connections.
          await timed('record_statements', () =>
            Promise.all(Array.from({ length: WARM_CONNECTIONS }, () => recordSuccesses(knex(), [], []))),
          );
          // In `workflow` shape the dispatcher sends nothing: its start path is what runs first.
          await timed('first_claim_round', async () => {
            if (asWorkflows) return startQueuedDeliveries(handOverDeps, startPath, walk).then(() => undefined);
            dispatcher!.wake();
            await dispatcher!.settled();
          });
          return parts;
        },
        markWarm: () => listener.markWarm(),
        async stop() {
          clearInterval(timer);
          await dispatcher!.stop();
          await Promise.all([sweeping.idle(), retries.idle(), ordered.idle(), starting.idle(), deleted.idle()]);
          // First attempts the start path began, and no local activity joined, are recorded before the end.
          await attempts.idle();
          await listener.stop();
        },
      };
    },
  };
}

/** Runs `task` one at a time: a call while it runs makes it run once more after. Failures are logged. */
function singleFlight<A>(name: string, task: (arg: A) => Promise<void>) {
  let running: Promise<void> | null = null;
  let next: A | undefined;
  const run = (arg: A): void => {
    if (running) {
      next = arg;
      return;
    }
    running = task(arg)
      .catch((err: unknown) => logger.warn({ err }, `${name} failed; the sweep tries again`))
      .finally(() => {
        running = null;
        if (next !== undefined) {
          const again = next;
          next = undefined;
          run(again);
        }
      });
  };
  return {
    run,
    async idle() {
      while (running) await running;
    },
  };
}
