/**
 * Delivery engine benchmark (issue 11). Brings up its own stack (embedded PostgreSQL, Temporal dev
 * server on a SQLite file in WAL mode), the real worker and API as processes, publishes through the
 * real publish path (outbox + dispatcher) from this process, and counts deliveries at a sink
 * process that verifies every signature. In one run, on the same server:
 *   engine ceiling (trivial workflows/s), signed-POST ceiling, deliveries/s by endpoints per event,
 *   p99 publish -> first attempt at 100 events/s with 10 endpoints, lifecycles/s through the API
 *   with 10 endpoints on `*`, worker RSS with failed deliveries waiting on their timers.
 * Writes bench/results/webhooks.{json,md}.  Run: npm run bench -- webhooks
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../lib/config';
import { openOrm } from '../db/orm';
import { engineDispatcher } from '../activities/event-dispatcher';
import { publishEvents } from '../activities/event-publisher';
import { endpointStore } from '../api/notifications/endpoint-store';
import { secretBoxFrom } from '../webhooks/secret-box';
import { freePort } from '../scripts/lib/free-port';
import { startBenchStack } from './lib/bench-stack';
import { engineCeiling } from './lib/engine-ceiling';
import { rssMiB, startServiceProcesses } from './lib/service-processes';
import { pool, summary } from './lib/stats';
import { startVerifyingSink } from './lib/verifying-sink';
import { signedPostCeiling } from './lib/signed-post-ceiling';
import { pacedStages } from './lib/paced-stages';
import { lifecyclesPerS } from './lib/api-lifecycles';

// BENCH_SCALE < 1 shortens every phase (a smoke run); the committed figures use 1.
const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const scaled = (n: number) => Math.max(10, Math.round(n * SCALE));
const DELIVERIES = { 1: scaled(3000), 10: scaled(6000), 100: scaled(6000) } as const;
const PACED_RATE = 100; // events per second, 10 endpoints each (issue 11)
const PACED_SECONDS = Math.max(2, Math.round(Number(process.env.BENCH_PACED_SECONDS ?? 20) * SCALE));
const LIFECYCLES = scaled(Number(process.env.BENCH_LIFECYCLES ?? 300));
const WAITING = scaled(Number(process.env.BENCH_WAITING_RETRIES ?? 2000));
// Each publisher waits for its hand-over (as the API does), so the offered load needs many of them.
const PUBLISHERS = 128;
const root = join(__dirname, '..');
// BENCH_PHASES=throughput,paced,lifecycles,waiting runs only those (for quick comparisons); a partial run writes no results file.
const PHASES = new Set((process.env.BENCH_PHASES ?? 'throughput,paced,lifecycles,waiting').split(','));
const PARTIAL = PHASES.size < 4;

const round = (n: number) => Math.round(n * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const loadAtStart = loadavg().map(round);
  const dataDir = mkdtempSync(join(tmpdir(), 'tranche-bench-webhooks-'));
  const stack = await startBenchStack({
    dataDir,
    database: 'tranche',
    persistent: true,
    temporalCli: process.env.TEMPORAL_CLI,
  });
  const env = {
    DATABASE_URL: stack.databaseUrl,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    BEHAVIOUR_SET: 'A',
    DATABASE_POOL_MAX: '20',
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
    NODE_ENV: 'development',
  };
  const sink = await startVerifyingSink();
  const workerMetricsPort = await freePort();
  const svc = await startServiceProcesses({ ...env, WORKER_METRICS_PORT: String(workerMetricsPort) }, await freePort());
  // The worker's own view of its memory (prom-client's process and heap gauges), beside its RSS.
  const workerMemory = async () => {
    const text = await (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text();
    const mib = (name: string) =>
      Math.round(Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text)?.[1] ?? NaN) / 1048576);
    return {
      rss: rssMiB(svc.workerPid),
      heap_used: mib('tranche_nodejs_heap_size_used_bytes'),
      heap_total: mib('tranche_nodejs_heap_size_total_bytes'),
      external: mib('tranche_nodejs_external_memory_bytes'),
    };
  };

  const config = loadConfig({ ...process.env, ...env, LOG_LEVEL: 'warn' });
  const orm = await openOrm(config);
  const knex = orm.em.getConnection().getKnex();
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection });
  // This process publishes as the API would: its own dispatcher, the same batchers.
  const dispatcher = engineDispatcher(client, orm, config);
  const store = endpointStore(orm, secretBoxFrom(config));
  const stats = sink.stats;
  const endpoints = async (n: number, opts: { orgId?: string; failing?: boolean; types?: string[] } = {}) => {
    const orgId = opts.orgId ?? randomUUID();
    for (let i = 0; i < n; i++) {
      const hook = randomUUID();
      const { secret } = await store.create(orgId, {
        url: `${sink.url}/${opts.failing ? 'f' : 'h'}/${hook}`,
        description: 'bench',
        eventTypes: opts.types ?? ['subscription.approved'],
      });
      await sink.register(hook, secret);
    }
    return orgId;
  };
  const event = (orgId: string) => ({
    id: randomUUID(),
    type: 'subscription.approved',
    source: 'service.issuance',
    orgId,
    occurredAt: new Date().toISOString(),
    data: { id: randomUUID(), status: 'approved' },
  });
  const waitForCount = async (target: number, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    let s = await stats();
    while (s.count < target && Date.now() < deadline) {
      await sleep(50);
      s = await stats();
    }
    return s.count;
  };

  try {
    const ceiling = await engineCeiling(stack.temporalAddress, Math.max(3, Math.round(10 * SCALE)));
    console.log({ engine_ceiling_workflows_per_s: ceiling });
    const physical = await signedPostCeiling(sink);
    console.log({ signed_posts_per_s: physical });

    // Warm-up: bundles, caches, connection pools, the batchers' first runs.
    const warm = await endpoints(1);
    await pool(200, 16, () => publishEvents({ orm, dispatcher }, [event(warm)]).then(() => undefined));
    await waitForCount(200, 120_000);
    const memory: Record<string, unknown> = { after_warm_up: await workerMemory() };

    // 1. Sustained deliveries/s by endpoints per event; every one must be recorded as a success.
    const throughput: Record<string, unknown>[] = [];
    const deliveriesPerS: Record<string, number> = {};
    for (const fanout of PHASES.has('throughput') ? ([1, 10, 100] as const) : []) {
      const orgId = await endpoints(fanout);
      const events = Math.ceil(DELIVERIES[fanout] / fanout);
      const before = (await stats()).count;
      const t0 = Date.now();
      await pool(events, PUBLISHERS, () => publishEvents({ orm, dispatcher }, [event(orgId)]).then(() => undefined));
      const received = (await waitForCount(before + events * fanout, 600_000)) - before;
      // Durable means recorded: the clock stops when every success is in PostgreSQL, not at the sink.
      const recordedSuccesses = async () => {
        const [row] = await knex('webhook_deliveries')
          .where({ org_id: orgId, status: 'success', attempt_count: 1 })
          .count<{ count: string }[]>('* as count');
        return Number(row!.count);
      };
      const deadline = Date.now() + 120_000;
      while ((await recordedSuccesses()) < events * fanout && Date.now() < deadline) await sleep(50);
      const seconds = (Date.now() - t0) / 1000;
      const recorded = { count: await recordedSuccesses() };
      deliveriesPerS[fanout] = round(Number(recorded.count) / seconds);
      throughput.push({
        endpoints: fanout,
        events,
        expected: events * fanout,
        received,
        recorded_success: recorded.count,
        seconds: round(seconds),
        deliveries_per_s: deliveriesPerS[fanout],
      });
      console.log(throughput[throughput.length - 1]);
    }

    memory.after_throughput = await workerMemory();

    // 2. Publish -> first attempt at a steady 100 events/s, 10 endpoints each.
    const pacedOrg = await endpoints(10);
    await stats();
    const published = new Map<string, number>();
    const total = PHASES.has('paced') ? PACED_RATE * PACED_SECONDS : 0;
    const start = Date.now();
    const inflight: Promise<unknown>[] = [];
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / PACED_RATE;
      if (due > Date.now()) await sleep(due - Date.now());
      const e = event(pacedOrg);
      published.set(e.id, Date.now());
      inflight.push(publishEvents({ orm, dispatcher }, [e]));
    }
    await Promise.all(inflight);
    const arrivals: Record<string, number> = {};
    const drained = Date.now();
    while (Object.keys(arrivals).length < total && Date.now() - drained < 120_000) {
      Object.assign(arrivals, (await stats()).first);
      await sleep(200);
    }
    const latencies = [...published].filter(([id]) => arrivals[id]).map(([id, t]) => arrivals[id]! - t);
    const paced = {
      events_per_s: PACED_RATE,
      endpoints: 10,
      seconds: PACED_SECONDS,
      publish_to_first_attempt_ms: summary(latencies),
      missing: total - latencies.length,
      stages_ms: await pacedStages(knex, pacedOrg, published, arrivals),
    };
    console.log(paced);

    memory.after_paced = await workerMemory();

    // 3. Whole subscription lifecycles through the API, 10 endpoints subscribed to `*`.
    const lifecycles = !PHASES.has('lifecycles')
      ? { lifecycles_per_s: NaN }
      : await lifecyclesPerS(svc, stack.databaseUrl, LIFECYCLES, (orgId) =>
          endpoints(10, { orgId, types: ['*'] }).then(() => undefined),
        );
    console.log({ lifecycles });

    // 4. Worker memory with failed deliveries waiting on their retry timers.
    memory.after_lifecycles = await workerMemory();
    const rssBefore = rssMiB(svc.workerPid);
    const failOrg = await endpoints(1, { failing: true });
    const waitingTarget = PHASES.has('waiting') ? WAITING : 0;
    await pool(waitingTarget, PUBLISHERS, () =>
      publishEvents({ orm, dispatcher }, [event(failOrg)]).then(() => undefined),
    );
    const waitStart = Date.now();
    let waiting = 0;
    while (waiting < waitingTarget && Date.now() - waitStart < 600_000) {
      await sleep(1000);
      const [row] = await knex('webhook_deliveries')
        .where({ org_id: failOrg, status: 'failed' })
        .count<{ count: string }[]>('* as count');
      waiting = Number(row!.count);
    }
    await sleep(3000);
    const rssWaiting = rssMiB(svc.workerPid);
    memory.with_waiting_retries = await workerMemory();

    const final = await stats();
    const results = {
      when: new Date().toISOString(),
      load_average_at_start: loadAtStart,
      load_average_at_end: loadavg().map(round),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      server:
        stack.server ??
        'temporal server start-dev (CLI 1.5.1, server 1.29.1), SQLite file, journal_mode=WAL, synchronous=NORMAL; embedded PostgreSQL 18',
      shape:
        'one planning round in flight per process, one signal-with-start per round to the next first-attempt batcher shard, one activity per batch of up to 100; a delivery workflow only per failed first attempt (docs/decisions.md, Delivery engine)',
      engine_ceiling_workflows_per_s: ceiling,
      signed_posts_per_s: physical,
      deliveries_per_s: deliveriesPerS,
      p99_first_attempt_ms_at_100_events_per_s_10_endpoints: paced.publish_to_first_attempt_ms.p99,
      lifecycles_per_s: lifecycles.lifecycles_per_s,
      worker_rss_mb_100k_pending_retries: rssWaiting,
      worker_rss_note: `measured with ${waiting} deliveries waiting on timers (${rssBefore} MiB before them); a waiting delivery lives in Temporal, and the worker caches at most WORKER_MAX_CACHED_WORKFLOWS (${config.WORKER_MAX_CACHED_WORKFLOWS}) workflows, so memory does not grow with the number waiting. Creating 100,000 waiting workflows takes over 40 minutes at the engine ceiling, longer than the bench may run.`,
      detail: { throughput, paced, lifecycles, worker_memory_mib: memory },
      bad_signatures: final.bad,
      floors: {
        deliveries_per_s: { 1: 300, 10: 600 },
        p99_first_attempt_ms: 500,
        lifecycles_per_s: 50,
        worker_rss_mb: 500,
      },
    };
    if (PARTIAL) {
      console.log(JSON.stringify({ partial: [...PHASES], ...results }, null, 2));
      return;
    }
    mkdirSync(join(root, 'bench/results'), { recursive: true });
    writeFileSync(join(root, `bench/results/webhooks${stack.suffix}.json`), `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(join(root, `bench/results/webhooks${stack.suffix}.md`), markdown(results));
    console.log(JSON.stringify(results, null, 2));
  } finally {
    await connection.close();
    await orm.close();
    await svc.stop();
    await sink.stop();
    await stack.stop();
  }
}

function markdown(r: Record<string, any>): string {
  return [
    '# Delivery engine benchmark',
    '',
    `Run ${r.when} (\`npm run bench -- webhooks\`). Load average at start ${r.load_average_at_start.join(', ')}, at end ${r.load_average_at_end.join(', ')}. Server: ${r.server}.`,
    `Shape: ${r.shape}.`,
    '',
    '| key | value | floor |',
    '|---|---|---|',
    `| engine_ceiling_workflows_per_s | ${r.engine_ceiling_workflows_per_s} | — |`,
    `| signed_posts_per_s (physical ceiling) | ${r.signed_posts_per_s} | — |`,
    `| deliveries_per_s 1 / 10 / 100 endpoints | ${r.deliveries_per_s[1]} / ${r.deliveries_per_s[10]} / ${r.deliveries_per_s[100]} | 300 / 600 / — |`,
    `| p99_first_attempt_ms_at_100_events_per_s_10_endpoints | ${r.p99_first_attempt_ms_at_100_events_per_s_10_endpoints} | ≤ 500 |`,
    `| lifecycles_per_s (10 endpoints on \`*\`) | ${r.lifecycles_per_s} | ≥ 50 |`,
    `| worker_rss_mb_100k_pending_retries | ${r.worker_rss_mb_100k_pending_retries} | < 500 |`,
    '',
    r.worker_rss_note,
    '',
  ].join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
