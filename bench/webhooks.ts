/**
 * Delivery engine benchmark. Brings up its own stack (embedded PostgreSQL, Temporal on
 * the chosen server), the real worker and API as processes, and a verifying sink process that
 * counts every delivery and its duplicates. In one run, on the same server, it measures the engine
 * ceiling (trivial workflows/s) and the signed-POST ceiling, and reports every figure beside them:
 *   sustained deliveries/s at 1, 10 and 100 endpoints (≥ 60 s each, offered above capacity),
 *   publish → first attempt p99 at 50 events/s through the API and at 100 events/s × 10 endpoints,
 *   a healthy organisation's p99 beside one whose endpoint hangs and beside one's 20,000-delivery
 *   burst, messages/s through the API at one endpoint (32 in flight), duplicates, worker memory with
 * 10,000 deliveries waiting on their timers, and lifecycles/s; and the tail
 * (docs/decisions/0303-tail-benchmark-keys-and-hop-timing.md): test pings
 *   in the first 30 s after /ready on the fresh stack (run first), p99 at 200 pings/s, a 5,000-ping
 *   burst at 32 in flight, a neighbour beside another tenant's parked deliveries, and the hops of one
 *   delivery at 200/s (bench/lib/tail-phases.ts).
 * Writes bench/results/webhooks.{json,md}; exits 1 when any phase received other than it owed.
 *   npm run bench -- webhooks          (BENCH_SCALE=0.1 for a smoke run, BENCH_PHASES=apiMessages,…
 *                                       for some phases only; neither writes results)
 *   BENCH_SHAPES=engine,workflow npm run bench -- webhooks
 *                                      the whole run once per delivery shape (WEBHOOK_DELIVERY_SHAPE),
 *                                      each on a fresh stack with its own ceilings; the workflow
 *                                      shape's keys go under `shape_workflow`
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { runBench } from './lib/run-bench';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { ConfigSchema, loadConfig } from '../lib/runtime/config';
import { openOrm } from '../db/orm';
import { freePort } from '../scripts/lib/free-port';
import { startBenchStack } from './lib/bench-stack';
import { engineCeiling } from './lib/engine-ceiling';
import { dataConverterFromEnv } from '../lib/runtime/payload-codec';
import { startServiceProcesses } from './lib/service-processes';
import { startSink } from './lib/sink';
import { signedPostCeiling } from './lib/signed-post-ceiling';
import { apiSession } from './lib/api-session';
import { PHASES, warmUp, type PhaseContext } from './lib/webhook-phases';
import { startup } from './lib/tail-phases';
import { markdown } from './lib/webhooks-report';
import { writeCharts } from './lib/result-charts';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const seconds = (s: number) => Math.max(3, Math.round(s * SCALE));
const count = (n: number) => Math.max(10, Math.round(n * SCALE));
const root = join(__dirname, '..');
const round = (n: number) => Math.round(n * 10) / 10;

const SHAPES = (process.env.BENCH_SHAPES ?? 'engine').split(',') as Shape[];
type Shape = 'engine' | 'workflow';

/**
 * The `workflow` shape's phases: every key the issue asks of it, each sized to a workflow per delivery
 * (webhook-phases.ts, tail-phases.ts). Left out: 100 events/s × 10 endpoints and the API's messages/s
 * (they owe tens of thousands of deliveries, hours at this shape's rate), the hops (timed by the engine's
 * dispatcher, which this shape does not claim with) and 10,000 waiting retries (every delivery here is a
 * workflow already: lifecycles and the parked phase hold thousands).
 */
const WORKFLOW_SHAPE_PHASES: (keyof typeof PHASES)[] = [
  'throughput',
  // Before the neighbour phases, whose hanging and parked deliveries retry for minutes after them.
  'lifecycles',
  'apiLatency',
  'api200',
  'apiBurst',
  'parkedNeighbour',
  'noisyNeighbour',
  'burstNeighbour',
];

/**
 * Whether this code knows WEBHOOK_DELIVERY_SHAPE
 * (docs/decisions/0297-webhook-delivery-shape-as-a-setting.md): a config without it drops the variable, and a
 * `workflow` run would only measure the engine shape again, so it is not run.
 */
const shapeIsASetting = () => 'WEBHOOK_DELIVERY_SHAPE' in ConfigSchema.shape;

/** Whether every shape's run received and recorded exactly what it owed. Writes the results of a complete run. */
async function main(): Promise<boolean> {
  const runs: Partial<
    Record<Shape, { results: Record<string, any>; passed: boolean; complete: boolean; suffix: string }>
  > = {};
  for (const shape of SHAPES) {
    if (shape !== 'engine' && shape !== 'workflow') throw new Error(`BENCH_SHAPES: ${shape} is not engine or workflow`);
    if (shape === 'workflow' && !shapeIsASetting()) {
      console.log('[bench] shape workflow: WEBHOOK_DELIVERY_SHAPE is not a setting of this code; not run');
      continue;
    }
    console.log(`[bench] webhooks, shape ${shape}`);
    runs[shape] = await runShape(shape);
    // Written as each shape completes: a workflow-shape run cut short keeps the engine's results.
    if (SCALE === 1) writeResults(runs, shape === SHAPES[SHAPES.length - 1]);
  }
  return Object.values(runs).every((r) => r.passed);
}

/** bench/results/webhooks.{json,md}: the engine shape's keys, the workflow shape's under `shape_workflow`. */
function writeResults(
  runs: Partial<Record<Shape, { results: Record<string, any>; complete: boolean; suffix: string }>>,
  last: boolean,
) {
  const engine = SHAPES.includes('engine') ? runs.engine : keptEngineRun(runs.workflow?.suffix ?? '');
  if (!engine?.complete) return;
  // A workflow-shape run alone writes only when it is whole: a part of it (BENCH_PHASES) would
  // otherwise replace the last whole run's workflow keys with "not run".
  if (!SHAPES.includes('engine') && !runs.workflow?.complete) return;
  const results = {
    ...engine.results,
    shape_workflow: runs.workflow?.complete
      ? {
          ...runs.workflow.results,
          ...(SHAPES.includes('engine')
            ? {}
            : {
                measured_apart: `BENCH_SHAPES=workflow; the engine shape's keys above are from ${engine.results.when}`,
              }),
        }
      : {
          not_run: !SHAPES.includes('workflow')
            ? 'run with BENCH_SHAPES=engine,workflow to measure the workflow shape'
            : last
              ? 'the workflow shape did not complete in this run'
              : 'the workflow shape is running (or was stopped before it completed)',
        },
  };
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  writeFileSync(join(root, `bench/results/webhooks${engine.suffix}.json`), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(root, `bench/results/webhooks${engine.suffix}.md`), markdown(results));
  writeCharts(join(root, 'bench/results'));
}

/**
 * A workflow-shape run alone (BENCH_SHAPES=workflow) keeps the engine shape's results already written, so
 * one quiet window can measure the shape that changed; each shape's figures carry their own time and load.
 */
function keptEngineRun(suffix: string) {
  const file = join(root, `bench/results/webhooks${suffix}.json`);
  if (!existsSync(file)) return undefined;
  const { shape_workflow: _, ...results } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
  return { results, complete: results.delivery_shape === 'engine', suffix };
}

/** One whole run on a fresh stack with WEBHOOK_DELIVERY_SHAPE=`shape`. */
async function runShape(shape: Shape) {
  const loadAtStart = loadavg().map(round);
  const dataDir = mkdtempSync(join(tmpdir(), 'tranche-bench-webhooks-'));
  const hopDir = mkdtempSync(join(tmpdir(), 'tranche-bench-hops-'));
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
    WEBHOOK_DELIVERY_SHAPE: shape,
    // Timed only while the hops phase runs (lib/runtime/hop-log.ts).
    WEBHOOK_HOP_LOG_DIR: hopDir,
  };
  const sink = await startSink();
  const workerMetricsPort = await freePort();
  const svc = await startServiceProcesses({ ...env, WORKER_METRICS_PORT: String(workerMetricsPort) }, await freePort());
  const config = loadConfig({ ...process.env, ...env, LOG_LEVEL: 'warn' });
  const orm = await openOrm(config);
  const knex = orm.em.getConnection().getKnex();
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection, dataConverter: dataConverterFromEnv(process.env) });
  const api = await apiSession(svc.baseUrl, svc.accessTokenKeyPem, sink);
  const failures: string[] = [];
  const ctx: PhaseContext = {
    sink,
    api,
    knex,
    temporal,
    svc,
    databaseUrl: stack.databaseUrl,
    shape,
    hopDir,
    seconds,
    count,
    fail: (message) => failures.push(message),
  };
  const all = shape === 'workflow' ? WORKFLOW_SHAPE_PHASES : (Object.keys(PHASES) as (keyof typeof PHASES)[]);
  const chosen = (process.env.BENCH_PHASES?.split(',') ?? all) as (keyof typeof PHASES)[];
  const complete = SCALE === 1 && all.every((p) => chosen.includes(p));

  try {
    const figures: Record<string, any> = {};
    const detail: Record<string, unknown> = {};
    // First of all, on the fresh stack: nothing else has warmed anything yet.
    if (!process.env.BENCH_PHASES || chosen.includes('startup' as keyof typeof PHASES)) {
      const { detail: more, ...keys } = await startup(ctx);
      Object.assign(figures, keys);
      detail.startup = more;
    }
    const ceiling = await engineCeiling(stack.temporalAddress, seconds(10));
    const posts = await signedPostCeiling(sink);
    console.log({ engine_ceiling_workflows_per_s: ceiling, signed_posts_per_s: posts });
    await warmUp(ctx);
    for (const name of chosen.filter((n) => n in PHASES)) {
      const { detail: more, ...keys } = await PHASES[name](ctx);
      Object.assign(figures, keys);
      detail[name] = more;
    }
    const duplicates = (await sink.stats()).duplicates;
    const sustainedPerS: Record<string, number> = figures.sustained_deliveries_per_s ?? {};
    const ratio = (n: number, of: number, digits = 3) => Math.round((n / of) * 10 ** digits) / 10 ** digits;

    const results = {
      when: new Date().toISOString(),
      command: stack.suffix ? 'npm run bench -- --server cluster webhooks' : 'npm run bench -- webhooks',
      load_average_at_start: loadAtStart,
      load_average_at_end: loadavg().map(round),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      server:
        stack.server ??
        'temporal server start-dev (CLI 1.5.1, server 1.29.1), SQLite file, journal_mode=WAL, synchronous=NORMAL; embedded PostgreSQL 18',
      delivery_shape: shape,
      shape:
        shape === 'workflow'
          ? 'WEBHOOK_DELIVERY_SHAPE=workflow: every delivery a child workflow from its first attempt, its attempts sent through the engine’s fair sender'
          : 'publish = one statement (outbox, deliveries, queue, NOTIFY); each worker’s dispatcher claims fairly from the queue and POSTs each delivery on its own, recording by group commit; only a failed first attempt costs Temporal a workflow (docs/decisions/0173-dispatcher-engine-shape.md)',
      scale: SCALE,
      engine_ceiling_workflows_per_s: ceiling,
      signed_posts_per_s: posts,
      ...figures,
      duplicates,
      ratios: {
        sustained_to_signed_posts: Object.fromEntries(
          Object.entries(sustainedPerS).map(([k, v]) => [k, ratio(v, posts)]),
        ),
        sustained_to_engine_ceiling: Object.fromEntries(
          Object.entries(sustainedPerS).map(([k, v]) => [k, ratio(v, ceiling, 1)]),
        ),
        api_messages_to_signed_posts: ratio(figures.api_messages_per_s_1_endpoint, posts),
        api_messages_to_engine_ceiling: ratio(figures.api_messages_per_s_1_endpoint, ceiling, 1),
        noisy_to_baseline_p99: ratio(figures.noisy_neighbour_p99_ms, figures.noisy_neighbour_baseline_p99_ms, 2),
        lifecycles_to_engine_ceiling: ratio(figures.lifecycles_per_s, ceiling),
        burst_delivered_to_engine_ceiling: ratio(
          detail.apiBurst ? (detail.apiBurst as any).delivered_per_s : NaN,
          ceiling,
          1,
        ),
      },
      floors: {
        sustained_deliveries_per_s: { 1: 600, 10: 1500 },
        p99_first_attempt_ms_at_100_events_per_s_10_endpoints: 500,
        noisy_neighbour_p99_ms: 100,
        burst_neighbour_p99_ms: 1000,
        api_messages_per_s_1_endpoint: 1000,
        duplicates: 0,
        worker_rss_mb_10k_pending_retries: 500,
        parked_neighbour_p99_ms: 100,
        ...(shape === 'engine'
          ? { p99_first_attempt_ms_at_50_events_per_s_1_endpoint: 15, p99_ms_at_200_events_per_s_1_endpoint: 20 }
          : { p99_first_attempt_ms_at_50_events_per_s_1_endpoint: 100 }),
      },
      failures,
      detail,
    };
    console.log(JSON.stringify(results, null, 2));
    if (failures.length) console.error(`[bench] FAILED (shape ${shape}): ${failures.join('; ')}`);
    return { results, passed: failures.length === 0, complete, suffix: stack.suffix };
  } finally {
    await api.close();
    await connection.close();
    await orm.close();
    await svc.stop();
    await sink.stop();
    await stack.stop();
    rmSync(hopDir, { recursive: true, force: true });
  }
}

runBench(main);
