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
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client, Connection } from '@temporalio/client';
import { Agent, request } from 'undici';
import type { Knex } from '@mikro-orm/postgresql';
import { loadConfig } from '../lib/config';
import { openOrm } from '../db/orm';
import { engineDispatcher } from '../activities/event-dispatcher';
import { publishEvents } from '../activities/event-publisher';
import { endpointStore } from '../api/notifications/endpoint-store';
import { secretBoxFrom } from '../activities/webhook-secret-box';
import { AccessTokens } from '../api/identity/access-tokens';
import { freePort } from '../scripts/lib/free-port';
import { startBenchStack } from './lib/bench-stack';
import { stopProcess } from '../scripts/lib/temporal-dev-server';
import { engineCeiling } from './lib/engine-ceiling';
import { rssMiB, startServiceProcesses } from './lib/service-processes';
import { pool, summary } from './lib/stats';

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

// The consumer: verifies `sha256=` HMAC over the raw body, answers 200 (500 under /f/), notes each event's first arrival.
const SINK = `
const http = require('node:http'), { createHmac, timingSafeEqual } = require('node:crypto');
const secrets = new Map(); let count = 0, bad = 0, failed = 0; const first = new Map();
const server = http.createServer((req, res) => {
  const chunks = []; req.on('data', (c) => chunks.push(c)); req.on('end', () => {
    const body = Buffer.concat(chunks); const [, area, name] = req.url.split('/');
    if (area === 'secret') { secrets.set(name, body.toString()); return res.end('ok'); }
    if (area === 'stats') { const f = Object.fromEntries(first); first.clear(); return res.end(JSON.stringify({ count, bad, failed, first: f })); }
    if (area === 'f') { failed++; res.statusCode = 500; return res.end(); }
    const now = Date.now(); const secret = secrets.get(name) || '';
    const want = Buffer.from('sha256=' + createHmac('sha256', secret).update(body).digest('hex'));
    const got = Buffer.from(String(req.headers['x-service-signature'] || ''));
    if (got.length !== want.length || !timingSafeEqual(got, want)) { bad++; res.statusCode = 401; return res.end(); }
    count++; const id = req.headers['x-service-event-id']; if (!first.has(id)) first.set(id, now);
    res.end('ok');
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

interface SinkStats { count: number; bad: number; failed: number; first: Record<string, number> }
const round = (n: number) => Math.round(n * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const loadAtStart = loadavg().map(round);
  const dataDir = mkdtempSync(join(tmpdir(), 'tranche-bench-webhooks-'));
  const stack = await startBenchStack({ dataDir, database: 'tranche', persistent: true, temporalCli: process.env.TEMPORAL_CLI });
  const env = { DATABASE_URL: stack.databaseUrl, TEMPORAL_ADDRESS: stack.temporalAddress, BEHAVIOUR_SET: 'A', DATABASE_POOL_MAX: '20', WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true', NODE_ENV: 'development' };
  const sink = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
  const sinkUrl = `http://127.0.0.1:${await new Promise<string>((r) => createInterface({ input: sink.stdout! }).once('line', r))}`;
  const workerMetricsPort = await freePort();
  const svc = await startServiceProcesses({ ...env, WORKER_METRICS_PORT: String(workerMetricsPort) }, await freePort());
  // The worker's own view of its memory (prom-client's process and heap gauges), beside its RSS.
  const workerMemory = async () => {
    const text = await (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text();
    const mib = (name: string) => Math.round(Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text)?.[1] ?? NaN) / 1048576);
    return { rss: rssMiB(svc.workerPid), heap_used: mib('tranche_nodejs_heap_size_used_bytes'), heap_total: mib('tranche_nodejs_heap_size_total_bytes'), external: mib('tranche_nodejs_external_memory_bytes') };
  };

  const config = loadConfig({ ...process.env, ...env, LOG_LEVEL: 'warn' });
  const orm = await openOrm(config);
  const knex = orm.em.getConnection().getKnex();
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection });
  // This process publishes as the API would: its own dispatcher, the same batchers.
  const dispatcher = engineDispatcher(client, orm, config);
  const store = endpointStore(orm, secretBoxFrom(config));
  const stats = async (): Promise<SinkStats> => (await fetch(`${sinkUrl}/stats`)).json() as Promise<SinkStats>;
  const endpoints = async (n: number, opts: { orgId?: string; failing?: boolean; types?: string[] } = {}) => {
    const orgId = opts.orgId ?? randomUUID();
    for (let i = 0; i < n; i++) {
      const hook = randomUUID();
      const { secret } = await store.create(orgId, { url: `${sinkUrl}/${opts.failing ? 'f' : 'h'}/${hook}`, description: 'bench', eventTypes: opts.types ?? ['subscription.approved'] });
      await fetch(`${sinkUrl}/secret/${hook}`, { method: 'POST', body: secret });
    }
    return orgId;
  };
  const event = (orgId: string) => ({ id: randomUUID(), type: 'subscription.approved', source: 'service.issuance', orgId, occurredAt: new Date().toISOString(), data: { id: randomUUID(), status: 'approved' } });
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
    const physical = await signedPostCeiling(sinkUrl);
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
        const [row] = await knex('webhook_deliveries').where({ org_id: orgId, status: 'success', attempt_count: 1 }).count<{ count: string }[]>('* as count');
        return Number(row!.count);
      };
      const deadline = Date.now() + 120_000;
      while ((await recordedSuccesses()) < events * fanout && Date.now() < deadline) await sleep(50);
      const seconds = (Date.now() - t0) / 1000;
      const recorded = { count: await recordedSuccesses() };
      deliveriesPerS[fanout] = round(Number(recorded.count) / seconds);
      throughput.push({ endpoints: fanout, events, expected: events * fanout, received, recorded_success: recorded.count, seconds: round(seconds), deliveries_per_s: deliveriesPerS[fanout] });
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
    const paced = { events_per_s: PACED_RATE, endpoints: 10, seconds: PACED_SECONDS, publish_to_first_attempt_ms: summary(latencies), missing: total - latencies.length, stages_ms: await stages(knex, pacedOrg, published, arrivals) };
    console.log(paced);

    memory.after_paced = await workerMemory();

    // 3. Whole subscription lifecycles through the API, 10 endpoints subscribed to `*`.
    const lifecycles = !PHASES.has('lifecycles') ? { lifecycles_per_s: NaN } : await lifecyclesPerS(svc, stack.databaseUrl, (orgId) => endpoints(10, { orgId, types: ['*'] }).then(() => undefined));
    console.log({ lifecycles });

    // 4. Worker memory with failed deliveries waiting on their retry timers.
    memory.after_lifecycles = await workerMemory();
    const rssBefore = rssMiB(svc.workerPid);
    const failOrg = await endpoints(1, { failing: true });
    const waitingTarget = PHASES.has('waiting') ? WAITING : 0;
    await pool(waitingTarget, PUBLISHERS, () => publishEvents({ orm, dispatcher }, [event(failOrg)]).then(() => undefined));
    const waitStart = Date.now();
    let waiting = 0;
    while (waiting < waitingTarget && Date.now() - waitStart < 600_000) {
      await sleep(1000);
      const [row] = await knex('webhook_deliveries').where({ org_id: failOrg, status: 'failed' }).count<{ count: string }[]>('* as count');
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
      server: stack.server ?? 'temporal server start-dev (CLI 1.5.1, server 1.29.1), SQLite file, journal_mode=WAL, synchronous=NORMAL; embedded PostgreSQL 18',
      shape: 'one planning round in flight per process, one signal-with-start per round to the next first-attempt batcher shard, one activity per batch of up to 100; a delivery workflow only per failed first attempt (docs/decisions.md, Delivery engine)',
      engine_ceiling_workflows_per_s: ceiling,
      signed_posts_per_s: physical,
      deliveries_per_s: deliveriesPerS,
      p99_first_attempt_ms_at_100_events_per_s_10_endpoints: paced.publish_to_first_attempt_ms.p99,
      lifecycles_per_s: lifecycles.lifecycles_per_s,
      worker_rss_mb_100k_pending_retries: rssWaiting,
      worker_rss_note: `measured with ${waiting} deliveries waiting on timers (${rssBefore} MiB before them); a waiting delivery lives in Temporal, and the worker caches at most WORKER_MAX_CACHED_WORKFLOWS (${config.WORKER_MAX_CACHED_WORKFLOWS}) workflows, so memory does not grow with the number waiting. Creating 100,000 waiting workflows takes over 40 minutes at the engine ceiling, longer than the bench may run.`,
      detail: { throughput, paced, lifecycles, worker_memory_mib: memory },
      bad_signatures: final.bad,
      floors: { deliveries_per_s: { 1: 300, 10: 600 }, p99_first_attempt_ms: 500, lifecycles_per_s: 50, worker_rss_mb: 500 },
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
    await stopProcess(sink as ChildProcess);
    await stack.stop();
  }
}

/** Set A wire lifecycles (create, sign, submit, approve, reconcile) through the API, each event fanned out to 10 endpoints. */
async function lifecyclesPerS(svc: Awaited<ReturnType<typeof startServiceProcesses>>, databaseUrl: string, subscribeHooks: (orgId: string) => Promise<void>) {
  const { Client: Pg } = await import('pg');
  const tokens = await AccessTokens.create({ privateKeyPem: svc.accessTokenKeyPem, ttlSeconds: 3600 });
  const org = randomUUID();
  await subscribeHooks(org);
  const staff = await tokens.sign({ userId: 'staff-1', orgId: org, roles: ['staff'], kycCompleted: true });
  const investor = await tokens.sign({ userId: 'investor-1', orgId: org, roles: ['investor'], kycCompleted: true });
  const db = new Pg({ connectionString: databaseUrl });
  await db.connect();
  await db.query(`insert into kyc_verifications (org_id, user_id, status) values ($1, $2, 'approved')`, [org, 'investor-1']);
  await db.end();
  const took: Record<string, number[]> = {};
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const t0 = performance.now();
    const name = path.split('/').filter((p) => p && !/^[0-9a-f-]{36}$/.test(p)).slice(-1)[0]!;
    const res = await fetch(svc.baseUrl + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(60_000) });
    const json = (await res.json()) as { data: Record<string, string> };
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    (took[name] ??= []).push(performance.now() - t0);
    return json.data;
  };
  const offering = await call('POST', '/issuance/offerings', staff, { name: 'Bench', currency: 'USD' });
  const cls = await call('POST', `/issuance/offerings/${offering.id}/security-classes`, staff, { name: 'Common', pricePerUnit: '10.00' });
  const lifecycle = async () => {
    const s = await call('POST', `/issuance/offerings/${offering.id}/subscriptions`, investor, { securityClassId: cls.id, unitsSubscribed: 3 });
    await call('POST', `/issuance/subscriptions/${s.id}/sign-agreement`, investor, { signature: 'Bench Investor', signedAt: new Date().toISOString() });
    const submitted = await call('POST', `/issuance/subscriptions/${s.id}/submit-for-review`, investor, { paymentMethod: 'wire' });
    await call('POST', `/issuance/subscriptions/${s.id}/approve`, staff, {});
    await call('POST', '/issuance/reconciliations', staff, { referenceCode: submitted.reference_code, amount: '30.00' });
  };
  await pool(20, 8, lifecycle); // warm-up
  for (const k of Object.keys(took)) delete took[k];
  const t0 = performance.now();
  await pool(LIFECYCLES, 32, lifecycle);
  const seconds = (performance.now() - t0) / 1000;
  const commandMs = Object.fromEntries(Object.entries(took).map(([k, v]) => [k, summary(v)]));
  return { lifecycles: LIFECYCLES, endpoints: 10, clients: 32, seconds: round(seconds), lifecycles_per_s: round(LIFECYCLES / seconds), command_ms: commandMs };
}

/**
 * Where the paced phase's latency goes, per event, from the rows' own clocks: publish -> committed
 * (the outbox insert), -> planned (delivery rows), -> first batch started (attempt 1's time, set by
 * the batcher when it takes the batch), -> first arrival at the sink.
 */
async function stages(knex: Knex, orgId: string, published: Map<string, number>, arrivals: Record<string, number>) {
  const rows: { id: string; committed: Date; planned: Date; attempted: Date }[] = (
    await knex.raw(
      `select ev.id, ev.created_at as committed, min(d.created_at) as planned, min(a.attempted_at) as attempted
         from events ev join webhook_deliveries d on d.event_id = ev.id join webhook_attempts a on a.delivery_id = d.id and a.number = 1
        where ev.org_id = ? group by ev.id, ev.created_at`,
      [orgId],
    )
  ).rows;
  const commit: number[] = [], plan: number[] = [], batch: number[] = [], post: number[] = [];
  for (const r of rows) {
    const t0 = published.get(r.id);
    const arrived = arrivals[r.id];
    if (t0 === undefined || arrived === undefined) continue;
    commit.push(new Date(r.committed).getTime() - t0);
    plan.push(new Date(r.planned).getTime() - new Date(r.committed).getTime());
    batch.push(new Date(r.attempted).getTime() - new Date(r.planned).getTime());
    post.push(arrived - new Date(r.attempted).getTime());
  }
  return { to_commit: summary(commit), commit_to_planned: summary(plan), planned_to_batch: summary(batch), batch_to_arrival: summary(post) };
}

/**
 * Plain signed POSTs, no durability: what the machine can do at all, with the HTTP client and pool
 * size the engine uses (undici `request`, 128 connections), so the two figures compare.
 */
async function signedPostCeiling(sinkUrl: string): Promise<number> {
  const hook = 'ceiling';
  const secret = 'whsec_ceiling';
  await fetch(`${sinkUrl}/secret/${hook}`, { method: 'POST', body: secret });
  const body = JSON.stringify({ event_id: randomUUID(), event_type: 'subscription.approved', data: { id: randomUUID() } });
  const dispatcher = new Agent({ connections: 128 });
  let n = 0;
  const until = Date.now() + 5000;
  try {
    await Promise.all(
      Array.from({ length: 128 }, async () => {
        while (Date.now() < until) {
          const sig = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
          const res = await request(`${sinkUrl}/h/${hook}`, { method: 'POST', body, dispatcher, headers: { 'content-type': 'application/json', 'x-service-signature': sig, 'x-service-event-id': randomUUID() } });
          await res.body.dump();
          if (res.statusCode === 200) n++;
        }
      }),
    );
  } finally {
    await dispatcher.close();
  }
  return Math.round(n / 5);
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
