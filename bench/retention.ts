/**
 * Retention soak (docs/decisions/0237-bench-the-retention-soak-npm-run-bench-retention.md). Brings up its own
 * stack, the real worker and API as processes, and the verifying sink, with a short retention through
 * configuration (events, deliveries and attempts and payment notifications kept 2 min, Idempotency-Keys 2
 * min, the prune's Temporal Schedule every 30 s). For 10 minutes it publishes events in-process (50/s, two
 * endpoints each), sends test pings through the API with an Idempotency-Key (5/s) and signed sandbox payment
 * notifications (5/s). Every 15 s it samples the rows and sizes of the pruned tables. At the end it reads the
 * prune runs from Temporal and splits the first-attempt latency (publish → arrival at the sink) by whether a
 * prune ran during the delivery's flight. The engine ceiling is measured in the same run. Writes
 * bench/results/retention.{json,md}; exits 1 when a table did not stay flat after the first window, or a
 * delivery was lost or duplicated.
 *   npm run bench -- retention          (BENCH_SCALE=0.2 for a 2-minute smoke run with every window
 *                                        scaled; BENCH_RETENTION_SOAK_SECONDS=… shortens only the
 *                                        soak; neither writes bench/results)
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { runBench } from './lib/run-bench';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { request } from 'undici';
import { loadConfig } from '../lib/runtime/config';
import { openOrm } from '../db/orm';
import { publishEvents } from '../webhooks';
import { SANDBOX_SIGNATURE_HEADER, sandboxSecret, signSandboxBody } from '../payments';
import { freePort } from '../scripts/lib/free-port';
import { startBenchStack } from './lib/bench-stack';
import { engineCeiling } from './lib/engine-ceiling';
import { dataConverterFromEnv } from '../lib/runtime/payload-codec';
import { startServiceProcesses } from './lib/service-processes';
import { startSink } from './lib/sink';
import { apiSession } from './lib/api-session';
import { paced } from './lib/paced';
import { summary } from './lib/stats';
import { flatness, sampleTables, type TableSample } from './lib/table-sizes';
import { latencyAroundPrunes, pruneRuns, type Flight } from './lib/prune-runs';
import { retentionMarkdown } from './lib/retention-report';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const scaled = (s: number, min: number) => Math.max(min, Math.round(s * SCALE));
const SOAK_S = Number(process.env.BENCH_RETENTION_SOAK_SECONDS ?? scaled(600, 30));
const RETENTION_S = scaled(120, 20);
const PRUNE_EVERY_S = scaled(30, 5);
const SAMPLE_EVERY_S = scaled(15, 3);
const EVENTS_PER_S = 50;
const ENDPOINTS = 2;
const PINGS_PER_S = 5;
const NOTIFICATIONS_PER_S = 5;
const root = join(__dirname, '..');
const round = (n: number) => Math.round(n * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<boolean> {
  const loadAtStart = loadavg().map(round);
  const dataDir = mkdtempSync(join(tmpdir(), 'tranche-bench-retention-'));
  const stack = await startBenchStack({
    dataDir,
    database: 'tranche',
    persistent: true,
    temporalCli: process.env.TEMPORAL_CLI,
  });
  const retention = {
    RETENTION_EVENTS_SECONDS: String(RETENTION_S),
    RETENTION_PAYMENT_NOTIFICATIONS_SECONDS: String(RETENTION_S),
    RETENTION_PRUNE_INTERVAL_SECONDS: String(PRUNE_EVERY_S),
    IDEMPOTENCY_KEY_TTL_SECONDS: String(RETENTION_S),
  };
  const env = {
    DATABASE_URL: stack.databaseUrl,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    BEHAVIOUR_SET: 'A',
    DATABASE_POOL_MAX: '20',
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
    NODE_ENV: 'development',
    ...retention,
  };
  const sink = await startSink();
  const svc = await startServiceProcesses({ ...env, WORKER_METRICS_PORT: String(await freePort()) }, await freePort());
  const config = loadConfig({ ...process.env, ...env, LOG_LEVEL: 'warn' });
  const orm = await openOrm(config);
  const knex = orm.em.getConnection().getKnex();
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection, dataConverter: dataConverterFromEnv(process.env) });
  const api = await apiSession(svc.baseUrl, svc.accessTokenKeyPem, sink);
  const failures: string[] = [];
  const complete = SCALE === 1 && process.env.BENCH_RETENTION_SOAK_SECONDS === undefined;

  let notificationError: string | undefined;
  const notification = async () => {
    const id = `evt_soak_${crypto.randomUUID()}`;
    const body = JSON.stringify({
      id,
      type: 'payment.succeeded',
      created: new Date().toISOString(),
      // No subscription: acknowledged and recorded as ignored, a row for the retention all the same.
      data: { subscription_id: null, reference: id, amount: '1.00', currency: 'USD' },
    });
    const res = await request(`${svc.baseUrl}/payments/sandbox/notifications`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [SANDBOX_SIGNATURE_HEADER]: signSandboxBody(sandboxSecret(config), body),
      },
      body,
    });
    const answer = await res.body.text();
    if (res.statusCode !== 200) {
      notificationError ??= `notification answered ${res.statusCode}: ${answer.slice(0, 200)}`;
      throw new Error(notificationError);
    }
    return id;
  };

  try {
    const ceiling = await engineCeiling(stack.temporalAddress, scaled(10, 3));
    console.log({ engine_ceiling_workflows_per_s: ceiling, soak_s: SOAK_S, retention_s: RETENTION_S });
    const org = await api.org();
    const endpoints = await org.endpoints(ENDPOINTS, { eventTypes: ['subscription.approved', 'test.ping'] });
    const flights: Flight[] = [];
    const published = new Map<string, number>();
    const collect = async () => {
      for (const [, eventId, at] of await sink.arrivals()) {
        const t0 = published.get(eventId);
        if (t0 !== undefined) flights.push([t0, at]);
      }
    };

    const start = Date.now();
    const samples: TableSample[] = [];
    let soaking = true;
    const sampler = (async () => {
      while (soaking) {
        samples.push(await sampleTables(knex, round((Date.now() - start) / 1000)));
        await collect();
        const last = samples[samples.length - 1]!;
        console.log(`[retention] t=${last.t}s rows ${JSON.stringify(last.rows)}`);
        const due = start + samples.length * SAMPLE_EVERY_S * 1000;
        while (soaking && Date.now() < due) await sleep(Math.min(500, due - Date.now()));
      }
    })();
    const publish = async () => {
      const e = {
        id: crypto.randomUUID(),
        type: 'subscription.approved',
        source: 'service.issuance',
        orgId: org.orgId,
        occurredAt: new Date().toISOString(),
        data: { id: crypto.randomUUID(), status: 'approved' },
      };
      // Kept before the commit, so an arrival collected while the publish is still answered counts.
      published.set(e.id, Date.now());
      await publishEvents(knex, [e], { set: 'A' });
      return e.id;
    };
    // Pings (their event id is known only once the API answers) fill the Idempotency-Keys and add
    // deliveries; the latency of record is the in-process events'.
    let pingIndex = 0;
    const [events, pings, notes] = await Promise.all([
      paced({ ratePerS: EVENTS_PER_S, seconds: SOAK_S, send: publish }),
      paced({
        ratePerS: PINGS_PER_S,
        seconds: SOAK_S,
        send: () => org.ping(endpoints[pingIndex++ % ENDPOINTS]!, crypto.randomUUID()),
      }),
      paced({
        ratePerS: NOTIFICATIONS_PER_S,
        seconds: SOAK_S,
        send: () =>
          notification().catch((err: Error) => {
            notificationError ??= err.message;
            throw err;
          }),
      }),
    ]);
    soaking = false;
    await sampler;
    const owed = events.published.size * ENDPOINTS + pings.published.size;
    const stats = await sink.waitForReceipts([org.orgId], owed, 120_000);
    await collect();
    const soakEnd = Date.now();
    await sleep(2000); // visibility catches up with the last runs
    const runs = await pruneRuns(temporal, start);
    const latency = latencyAroundPrunes(flights, runs, scaled(5, 2) * 1000);
    if (flights.length !== events.published.size * ENDPOINTS)
      failures.push(`${flights.length} first arrivals of ${events.published.size * ENDPOINTS} event deliveries`);
    const steadyFrom = RETENTION_S + 2 * PRUNE_EVERY_S;
    const flat = flatness(samples, steadyFrom);

    if (stats.received < owed || stats.duplicates !== 0)
      failures.push(`${stats.received} of ${owed} deliveries received, ${stats.duplicates} duplicates`);
    if (events.failures || pings.failures || notes.failures)
      failures.push(
        `publish failures: events ${events.failures}, pings ${pings.failures}, notifications ${notes.failures} (${notificationError ?? 'none answered'})`,
      );
    if (flat.steady_samples < 3)
      failures.push(`${flat.steady_samples} samples after the first window: too short to judge`);
    else
      for (const [table, t] of Object.entries(flat.tables))
        if (!t.flat) failures.push(`${table} grew ${t.row_growth}× after the first window`);
    if (runs.length === 0) failures.push('no prune ran');

    const pruned = runs.reduce(
      (sum, r) => {
        for (const [k, v] of Object.entries(r.deleted ?? {})) sum[k] = (sum[k] ?? 0) + v;
        return sum;
      },
      {} as Record<string, number>,
    );
    const deliveriesPerS = EVENTS_PER_S * ENDPOINTS + PINGS_PER_S;
    const results = {
      when: new Date().toISOString(),
      load_average_at_start: loadAtStart,
      load_average_at_end: loadavg().map(round),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      server:
        stack.server ??
        'temporal server start-dev (CLI 1.5.1, server 1.29.1), SQLite file, journal_mode=WAL, synchronous=NORMAL; embedded PostgreSQL 18',
      scale: SCALE,
      soak_s: Math.round((soakEnd - start) / 1000),
      configuration: { ...retention, sample_every_s: SAMPLE_EVERY_S },
      offered: {
        events_per_s: EVENTS_PER_S,
        endpoints_per_event: ENDPOINTS,
        api_pings_per_s_with_idempotency_key: PINGS_PER_S,
        payment_notifications_per_s: NOTIFICATIONS_PER_S,
        deliveries_per_s: deliveriesPerS,
      },
      engine_ceiling_workflows_per_s: ceiling,
      p99_first_attempt_ms_during_prune: latency.during_prune.p99,
      p99_first_attempt_ms_outside_prune: latency.outside_prune.p99,
      tables_flat_after_first_window: Object.values(flat.tables).every((t) => t.flat),
      prune_runs: runs.length,
      prune_run_s: summary(runs.map((r) => (r.end - r.start) / 1000)),
      rows_pruned: pruned,
      ratios: {
        p99_during_to_outside_prune: Math.round((latency.during_prune.p99 / latency.outside_prune.p99) * 100) / 100,
        deliveries_per_s_to_engine_ceiling: Math.round((deliveriesPerS / ceiling) * 100) / 100,
      },
      received: stats.received,
      owed,
      duplicates: stats.duplicates,
      failures,
      detail: { flatness: flat, latency, samples, runs },
    };
    console.log(
      JSON.stringify(
        { ...results, detail: { flatness: flat, latency: { ...latency, per_window: undefined } } },
        null,
        2,
      ),
    );
    const dir = complete ? join(root, 'bench/results') : mkdtempSync(join(tmpdir(), 'tranche-bench-retention-smoke-'));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `retention${stack.suffix}.json`), `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(join(dir, `retention${stack.suffix}.md`), retentionMarkdown(results));
    console.error(`[bench] results in ${dir}${complete ? '' : ' (a shortened run: not bench/results)'}`);
    if (failures.length) {
      console.error(`[bench] FAILED: ${failures.join('; ')}`);
      return false;
    }
    return true;
  } finally {
    await api.close();
    await connection.close();
    await orm.close();
    await svc.stop();
    await sink.stop();
    await stack.stop();
  }
}

runBench(main);
