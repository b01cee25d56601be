/**
 * Delivery engine benchmark (issue 19). Brings up its own stack (embedded PostgreSQL, Temporal on
 * the chosen server), the real worker and API as processes, and a verifying sink process that
 * counts every delivery and its duplicates. In one run, on the same server, it measures the engine
 * ceiling (trivial workflows/s) and the signed-POST ceiling, and reports every figure beside them:
 *   sustained deliveries/s at 1, 10 and 100 endpoints (≥ 60 s each, offered above capacity),
 *   publish → first attempt p99 at 50 events/s through the API and at 100 events/s × 10 endpoints,
 *   a healthy organisation's p99 beside one whose endpoint hangs and beside one's 20,000-delivery
 *   burst, messages/s through the API at one endpoint (32 in flight), duplicates, worker memory with
 *   10,000 deliveries waiting on their timers, and lifecycles/s.
 * Writes bench/results/webhooks.{json,md}; exits 1 when any phase received other than it owed.
 *   npm run bench -- webhooks          (BENCH_SCALE=0.1 for a smoke run, which writes no results)
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../lib/config';
import { openOrm } from '../db/orm';
import { publishEvents } from '../webhooks';
import { freePort } from '../scripts/lib/free-port';
import { startBenchStack } from './lib/bench-stack';
import { engineCeiling } from './lib/engine-ceiling';
import { rssMiB, startServiceProcesses } from './lib/service-processes';
import { pool, summary } from './lib/stats';
import { startSink } from './lib/sink';
import { signedPostCeiling } from './lib/signed-post-ceiling';
import { firstAttemptLatency, paced } from './lib/paced';
import { sustained } from './lib/sustained';
import { lifecyclesPerS } from './lib/api-lifecycles';
import { apiSession, type ApiOrg } from './lib/api-session';
import { waitingRetries } from './lib/waiting-retries';
import { markdown } from './lib/webhooks-report';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const seconds = (s: number) => Math.max(3, Math.round(s * SCALE));
const count = (n: number) => Math.max(10, Math.round(n * SCALE));
const root = join(__dirname, '..');
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
  const sink = await startSink();
  const workerMetricsPort = await freePort();
  const svc = await startServiceProcesses({ ...env, WORKER_METRICS_PORT: String(workerMetricsPort) }, await freePort());
  const config = loadConfig({ ...process.env, ...env, LOG_LEVEL: 'warn' });
  const orm = await openOrm(config);
  const knex = orm.em.getConnection().getKnex();
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection });
  const api = await apiSession(svc.baseUrl, svc.accessTokenKeyPem, sink);
  const failures: string[] = [];
  const event = (orgId: string) => ({
    id: crypto.randomUUID(),
    type: 'subscription.approved',
    source: 'service.issuance',
    orgId,
    occurredAt: new Date().toISOString(),
    data: { id: crypto.randomUUID(), status: 'approved' },
  });
  // The in-process publisher: the engine's own publish path, as the subscription workflows use it.
  const publish = (orgId: string, n = 1) =>
    publishEvents(
      knex,
      Array.from({ length: n }, () => event(orgId)),
      { set: 'A' },
    ).then(() => undefined);
  const exact = (phase: string, got: { received: number; duplicates: number }, owed: number) => {
    if (got.received !== owed || got.duplicates !== 0)
      failures.push(`${phase}: ${got.received} received, ${got.duplicates} duplicates, ${owed} owed`);
  };
  /** A paced run of test.pings through the API to one endpoint, with its latencies. */
  const pings = async (org: ApiOrg, endpointId: string, ratePerS: number, s: number) => {
    const run = await paced({ ratePerS, seconds: s, send: () => org.ping(endpointId) });
    await sleep(2000);
    return run;
  };

  try {
    const ceiling = await engineCeiling(stack.temporalAddress, seconds(10));
    const posts = await signedPostCeiling(sink);
    console.log({ engine_ceiling_workflows_per_s: ceiling, signed_posts_per_s: posts });

    // Warm-up: caches, pools, the worker's first rounds.
    const warm = await api.org();
    await warm.endpoints(1);
    await pool(500, 16, () => publish(warm.orgId));
    await sink.waitForReceived(500, 120_000);
    await sink.arrivals();

    // 1. Sustained deliveries/s by endpoints per event, offered above capacity.
    const throughput: Record<string, unknown>[] = [];
    const sustainedPerS: Record<number, number> = {};
    for (const fanout of [1, 10, 100]) {
      const org = await api.org();
      await org.endpoints(fanout);
      const phase = await sustained({
        sink,
        fanout,
        seconds: seconds(60),
        warmUpSeconds: seconds(5),
        maxBacklog: 8000,
        publishers: 16,
        publish: () => publish(org.orgId),
        recorded: async () =>
          Number(
            (
              await knex('webhook_deliveries')
                .where({ org_id: org.orgId, status: 'success', attempt_count: 1 })
                .count<{ n: string }[]>('* as n')
            )[0]!.n,
          ),
      });
      exact(`sustained ${fanout}`, phase, phase.published);
      sustainedPerS[fanout] = phase.deliveries_per_s;
      throughput.push(phase);
      console.log(phase);
      await sink.arrivals();
    }

    // 2. Publish → arrival at 50 events/s through the API, one endpoint.
    const apiOrg = await api.org();
    const [apiEndpoint] = await apiOrg.endpoints(1);
    const apiRun = await pings(apiOrg, apiEndpoint!, 50, seconds(60));
    const apiLatency = {
      ...firstAttemptLatency(apiRun, await sink.arrivals(), 1),
      api_answer_ms: summary(apiRun.answerMs),
    };
    console.log({ api_50_per_s: apiLatency });

    // 3. Publish → arrival at 100 events/s × 10 endpoints, in-process, after the phases above.
    const tenOrg = await api.org();
    await tenOrg.endpoints(10);
    const tenRun = await paced({
      ratePerS: 100,
      seconds: seconds(60),
      send: async () => {
        const e = event(tenOrg.orgId);
        await publishEvents(knex, [e], { set: 'A' });
        return e.id;
      },
    });
    await sleep(2000);
    const tenLatency = {
      ...firstAttemptLatency(tenRun, await sink.arrivals(), 10),
      commit_ms: summary(tenRun.answerMs),
    };
    console.log({ ten_endpoints_100_per_s: tenLatency });

    // 4. Neighbours: Y at 5 events/s alone, then beside X's endpoint that never answers.
    const y = await api.org();
    const [yEndpoint] = await y.endpoints(1);
    const baseline = firstAttemptLatency(await pings(y, yEndpoint!, 5, seconds(30)), await sink.arrivals(), 1);
    const x = await api.org();
    const [xHanging] = await x.endpoints(1, { kind: 'hang' });
    const [yRun] = await Promise.all([
      pings(y, yEndpoint!, 5, seconds(60)),
      paced({ ratePerS: 10, seconds: seconds(60), send: () => x.ping(xHanging!) }),
    ]);
    const noisy = firstAttemptLatency(yRun, await sink.arrivals(), 1);
    const hanging = (await sink.stats()).hanging;
    console.log({ noisy_baseline: baseline, noisy, hanging_requests: hanging });

    // 5. Y at 5 events/s while X publishes a 20,000-delivery burst (2,000 events × 10 endpoints).
    const bursty = await api.org();
    await bursty.endpoints(10);
    const burstBefore = await sink.stats();
    const burstEvents = count(2000);
    const burstStart = Date.now();
    const burstPublished = pool(burstEvents / 100, 4, () => publish(bursty.orgId, 100));
    const yBurst = pings(y, yEndpoint!, 5, seconds(20));
    await burstPublished;
    const burstDrained = await sink.waitForReceived(
      burstBefore.received + (await yBurst).published.size + burstEvents * 10,
      600_000,
    );
    const burstSeconds = round((Date.now() - burstStart) / 1000);
    const burst = firstAttemptLatency(await yBurst, await sink.arrivals(), 1);
    console.log({ burst_neighbour: burst, burst_seconds: burstSeconds });
    exact(
      'burst',
      {
        received: burstDrained.received - burstBefore.received,
        duplicates: burstDrained.duplicates - burstBefore.duplicates,
      },
      (await yBurst).published.size + burstEvents * 10,
    );

    // 6. Messages/s through the API at one endpoint, 32 in flight, as Svix was measured.
    const msgOrg = await api.org();
    const [msgEndpoint] = await msgOrg.endpoints(1);
    const msgBefore = await sink.stats();
    const msgStart = Date.now();
    let sent = 0;
    const msgUntil = msgStart + seconds(60) * 1000;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (Date.now() < msgUntil) {
          await msgOrg.ping(msgEndpoint!);
          sent++;
        }
      }),
    );
    const requestSeconds = (Date.now() - msgStart) / 1000;
    const msgDrained = await sink.waitForReceived(msgBefore.received + sent, 300_000);
    const msgArrivals = await sink.arrivals();
    const lastArrival = Math.max(...msgArrivals.map(([, , at]) => at));
    const apiMessages = {
      messages: sent,
      clients: 32,
      requests_per_s: round(sent / requestSeconds),
      delivered_per_s: round(sent / ((lastArrival - msgStart) / 1000)),
      seconds_to_last_arrival: round((lastArrival - msgStart) / 1000),
    };
    exact(
      'api messages',
      { received: msgDrained.received - msgBefore.received, duplicates: msgDrained.duplicates - msgBefore.duplicates },
      sent,
    );
    console.log({ api_messages: apiMessages });

    // 7. Whole subscription lifecycles through the API, 10 endpoints subscribed to `*`.
    const lifecycles = await lifecyclesPerS(svc, stack.databaseUrl, count(300), async (orgId) => {
      const org = await api.org(orgId);
      await org.endpoints(10, { eventTypes: ['*'] });
    });
    console.log({ lifecycles });
    const duplicates = (await sink.stats()).duplicates;

    // 8. Worker memory with 10,000 deliveries waiting on their retry timers.
    const rssBefore = rssMiB(svc.workerPid);
    const failing = await api.org();
    await failing.endpoints(1, { kind: 'f' });
    const waiting = await waitingRetries({
      temporal,
      count: count(10_000),
      publishBatch: (n) => publish(failing.orgId, n),
      timeoutMs: 1_800_000,
    });
    await sleep(3000);
    const rssWaiting = rssMiB(svc.workerPid);
    console.log({ waiting, rss: rssWaiting });

    const results = {
      when: new Date().toISOString(),
      load_average_at_start: loadAtStart,
      load_average_at_end: loadavg().map(round),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      server:
        stack.server ??
        'temporal server start-dev (CLI 1.5.1, server 1.29.1), SQLite file, journal_mode=WAL, synchronous=NORMAL; embedded PostgreSQL 18',
      shape:
        'publish = one statement (outbox, deliveries, queue, NOTIFY); each worker’s dispatcher claims fairly from the queue and POSTs each delivery on its own, recording by group commit; only a failed first attempt costs Temporal a workflow (docs/decisions.md, Delivery engine, part two)',
      scale: SCALE,
      engine_ceiling_workflows_per_s: ceiling,
      signed_posts_per_s: posts,
      sustained_deliveries_per_s: sustainedPerS,
      p99_first_attempt_ms_at_50_events_per_s_1_endpoint: apiLatency.p99,
      p99_first_attempt_ms_at_100_events_per_s_10_endpoints: tenLatency.p99,
      noisy_neighbour_p99_ms: noisy.p99,
      noisy_neighbour_baseline_p99_ms: baseline.p99,
      burst_neighbour_p99_ms: burst.p99,
      api_messages_per_s_1_endpoint: apiMessages.delivered_per_s,
      duplicates,
      worker_rss_mb_10k_pending_retries: rssWaiting,
      lifecycles_per_s: lifecycles.lifecycles_per_s,
      ratios: {
        sustained_to_signed_posts: Object.fromEntries(
          Object.entries(sustainedPerS).map(([k, v]) => [k, Math.round((v / posts) * 1000) / 1000]),
        ),
        sustained_to_engine_ceiling: Object.fromEntries(
          Object.entries(sustainedPerS).map(([k, v]) => [k, round(v / ceiling)]),
        ),
        api_messages_to_signed_posts: Math.round((apiMessages.delivered_per_s / posts) * 1000) / 1000,
        api_messages_to_engine_ceiling: round(apiMessages.delivered_per_s / ceiling),
        noisy_to_baseline_p99: round(noisy.p99 / baseline.p99),
        lifecycles_to_engine_ceiling: Math.round((lifecycles.lifecycles_per_s / ceiling) * 1000) / 1000,
      },
      floors: {
        sustained_deliveries_per_s: { 1: 600, 10: 1500 },
        p99_first_attempt_ms_at_50_events_per_s_1_endpoint: 100,
        p99_first_attempt_ms_at_100_events_per_s_10_endpoints: 500,
        noisy_neighbour_p99_ms: 100,
        burst_neighbour_p99_ms: 1000,
        api_messages_per_s_1_endpoint: 1000,
        duplicates: 0,
        worker_rss_mb_10k_pending_retries: 500,
      },
      failures,
      detail: {
        throughput,
        api_50_per_s: apiLatency,
        ten_endpoints_100_per_s: tenLatency,
        noisy: { baseline, with_hanging_neighbour: noisy, hanging_requests_held: hanging },
        burst: { neighbour: burst, deliveries: burstEvents * 10, drained_in_s: burstSeconds },
        api_messages: apiMessages,
        lifecycles,
        waiting_retries: { ...waiting, rss_mib_before: rssBefore, rss_mib: rssWaiting },
      },
    };
    console.log(JSON.stringify(results, null, 2));
    if (SCALE === 1) {
      mkdirSync(join(root, 'bench/results'), { recursive: true });
      writeFileSync(join(root, `bench/results/webhooks${stack.suffix}.json`), `${JSON.stringify(results, null, 2)}\n`);
      writeFileSync(join(root, `bench/results/webhooks${stack.suffix}.md`), markdown(results));
    }
    if (failures.length) {
      console.error(`[bench] FAILED: ${failures.join('; ')}`);
      process.exitCode = 1;
    }
  } finally {
    await api.close();
    await connection.close();
    await orm.close();
    await svc.stop();
    await sink.stop();
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
