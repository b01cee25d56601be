/**
 * Webhook benchmark (issue 4). Brings up its own stack (embedded PostgreSQL, Temporal dev server on
 * a SQLite file in WAL mode), runs the real worker (worker/main.ts) as its own process, publishes
 * events through the real publish path (outbox + dispatcher) from this process, and counts
 * deliveries at a local sink process that verifies every signature.
 *   1. deliveries/s with 1, 10 and 100 endpoints per event (the sink answers 200 at once)
 *   2. publish -> first attempt p50/p99 at a steady 50 events/s (1 endpoint)
 *   3. the ceiling: plain signed POSTs, 64 keep-alive connections, to the same sink
 * Writes bench/results/webhooks.{json,md}.  Run: TEMPORAL_CLI=$(bash scripts/tools.sh temporal) npx tsx bench/webhooks.ts
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../lib/config';
import { openOrm } from '../db/orm';
import { temporalDispatcher } from '../activities/event-dispatcher';
import { publishEvents } from '../activities/event-publisher';
import { endpointStore } from '../api/notifications/endpoint-store';
import { secretBoxFrom } from '../activities/webhook-secret-box';
import { startBenchStack } from './lib/bench-stack';
import { stopProcess } from '../scripts/lib/temporal-dev-server';
import { rssMiB } from './lib/service-processes';
import { pool, summary } from './lib/stats';

const TOTAL_DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 3000);
// With one endpoint every delivery is a whole event (its own fan-out): a smaller run keeps the bench short.
const SINGLE_DELIVERIES = Number(process.env.BENCH_SINGLE_DELIVERIES ?? 1500);
const FANOUTS = [1, 10, 100];
const PACED_RATE = 50; // events per second (issue 4)
const PACED_SECONDS = Number(process.env.BENCH_PACED_SECONDS ?? 30);
const PUBLISHERS = 32;
// BENCH_PERSISTENT=0 runs the dev server in memory: no durable timers across restarts, for comparison only.
const PERSISTENT = process.env.BENCH_PERSISTENT !== '0';
// BENCH_FIRST_ATTEMPT_IN_FANOUT=1 runs the worker with WEBHOOK_FIRST_ATTEMPT_IN_FANOUT (docs/decisions.md).
const FIRST_IN_FANOUT = process.env.BENCH_FIRST_ATTEMPT_IN_FANOUT === '1';
const VARIANT = `webhooks${PERSISTENT ? '' : '-in-memory'}${FIRST_IN_FANOUT ? '-first-attempt-in-fanout' : ''}`;
const root = join(__dirname, '..');

// The consumer: verifies `sha256=` HMAC over the raw body, answers 200, notes each event's first arrival.
const SINK = `
const http = require('node:http'), { createHmac, timingSafeEqual } = require('node:crypto');
const secrets = new Map(); let count = 0, bad = 0; const first = new Map();
const server = http.createServer((req, res) => {
  const chunks = []; req.on('data', (c) => chunks.push(c)); req.on('end', () => {
    const body = Buffer.concat(chunks); const [, area, name] = req.url.split('/');
    if (area === 'secret') { secrets.set(name, body.toString()); return res.end('ok'); }
    if (area === 'stats') { const f = Object.fromEntries(first); first.clear(); return res.end(JSON.stringify({ count, bad, first: f })); }
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

interface SinkStats { count: number; bad: number; first: Record<string, number> }

async function main(): Promise<void> {
  const temporalCli = process.env.TEMPORAL_CLI ?? execFileSync('bash', [join(root, 'scripts/tools.sh'), 'temporal']).toString().trim();
  const dataDir = mkdtempSync(join(tmpdir(), 'tranche-bench-webhooks-'));
  const stack = await startBenchStack({ dataDir, database: 'tranche', persistent: PERSISTENT, temporalCli });
  const env = { DATABASE_URL: stack.databaseUrl, TEMPORAL_ADDRESS: stack.temporalAddress, TEMPORAL_TASK_QUEUE: 'bench-webhooks', DATABASE_POOL_MAX: '20', WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true', NODE_ENV: 'development', WEBHOOK_FIRST_ATTEMPT_IN_FANOUT: String(FIRST_IN_FANOUT) };
  const sink = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
  const sinkUrl = `http://127.0.0.1:${await new Promise<string>((r) => createInterface({ input: sink.stdout! }).once('line', r))}`;
  const worker = spawn(process.execPath, ['--import', 'tsx', join(root, 'worker/main.ts')], { env: { ...process.env, ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => worker.stdout!.on('data', (c: Buffer) => c.toString().includes('worker started') && resolve()));
  worker.stdout!.resume();

  const config = loadConfig({ ...process.env, ...env, LOG_LEVEL: 'warn' });
  const orm = await openOrm(config);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection });
  const dispatcher = temporalDispatcher(client, config.TEMPORAL_TASK_QUEUE);
  const store = endpointStore(orm, secretBoxFrom(config));
  const stats = async (): Promise<SinkStats> => (await fetch(`${sinkUrl}/stats`)).json() as Promise<SinkStats>;
  const endpoints = async (n: number) => {
    const orgId = randomUUID();
    for (let i = 0; i < n; i++) {
      const hook = randomUUID();
      const { secret } = await store.create(orgId, { url: `${sinkUrl}/h/${hook}`, description: 'bench', eventTypes: ['subscription.approved'] });
      await fetch(`${sinkUrl}/secret/${hook}`, { method: 'POST', body: secret });
    }
    return orgId;
  };
  const event = (orgId: string) => ({ id: randomUUID(), type: 'subscription.approved', source: 'service.issuance', orgId, occurredAt: new Date().toISOString(), data: { id: randomUUID(), status: 'approved' } });
  const waitForCount = async (target: number, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    let s = await stats();
    while (s.count < target && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      s = { ...(await stats()), first: {} };
    }
    return s.count;
  };

  try {
    // Warm-up: bundles, caches, connection pools.
    const warm = await endpoints(1);
    await pool(100, 16, () => publishEvents({ orm, dispatcher }, [event(warm)]).then(() => undefined));
    await waitForCount(100, 60_000);

    const throughput = [];
    for (const fanout of FANOUTS) {
      const orgId = await endpoints(fanout);
      const events = Math.ceil((fanout === 1 ? SINGLE_DELIVERIES : TOTAL_DELIVERIES) / fanout);
      const before = (await stats()).count;
      const t0 = Date.now();
      await pool(events, PUBLISHERS, () => publishEvents({ orm, dispatcher }, [event(orgId)]).then(() => undefined));
      const publishSeconds = (Date.now() - t0) / 1000;
      const done = (await waitForCount(before + events * fanout, 600_000)) - before;
      const seconds = (Date.now() - t0) / 1000;
      throughput.push({ endpoints: fanout, events, deliveries: done, expected: events * fanout, seconds: round(seconds), deliveries_per_second: round(done / seconds), publish_events_per_second: round(events / publishSeconds) });
      console.log(throughput[throughput.length - 1]);
    }

    // Latency at a steady 50 events/s: publish start -> the sink's first receipt of the event.
    const orgId = await endpoints(1);
    await stats();
    const published = new Map<string, number>();
    const total = PACED_RATE * PACED_SECONDS;
    const start = Date.now();
    const inflight: Promise<unknown>[] = [];
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / PACED_RATE;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      const e = event(orgId);
      published.set(e.id, Date.now());
      inflight.push(publishEvents({ orm, dispatcher }, [e]));
    }
    await Promise.all(inflight);
    const before = Date.now();
    const arrivals: Record<string, number> = {};
    while (Object.keys(arrivals).length < total && Date.now() - before < 120_000) {
      Object.assign(arrivals, (await stats()).first);
      await new Promise((r) => setTimeout(r, 200));
    }
    const latencies = [...published].filter(([id]) => arrivals[id]).map(([id, t]) => arrivals[id]! - t);
    const paced = { events_per_second: PACED_RATE, seconds: PACED_SECONDS, publish_to_first_attempt_ms: summary(latencies), missing: total - latencies.length };
    console.log(paced);

    const ceiling = await signedPostCeiling(sinkUrl);
    console.log({ ceiling });
    const final = await stats();
    const results = {
      when: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      server: stack.server ?? `temporal server start-dev (CLI 1.5.1, server 1.29.1), ${PERSISTENT ? 'SQLite file, journal_mode=WAL, synchronous=NORMAL' : 'SQLite in memory'}; embedded PostgreSQL 18 (fsync off)`,
      shape: FIRST_IN_FANOUT
        ? 'one fan-out workflow per event making every first attempt as a local activity; a delivery workflow only for failed first attempts; worker as its own process'
        : 'one fan-out workflow per event, one delivery workflow per (event, endpoint), each attempt a local activity; worker as its own process',
      load_average_at_end: loadavg().map(round),
      throughput,
      paced,
      ceiling_signed_posts_per_second: ceiling,
      bad_signatures: final.bad,
      worker_rss_mib: rssMiB(worker.pid!),
      targets: {
        deliveries_per_second_at_least_200: throughput.map((t) => ({ endpoints: t.endpoints, met: t.deliveries_per_second >= 200 })),
        p99_under_500ms_at_50_events_per_second: paced.publish_to_first_attempt_ms.p99 < 500,
      },
    };
    mkdirSync(join(root, 'bench/results'), { recursive: true });
    const name = `${VARIANT}${stack.suffix}`;
    writeFileSync(join(root, `bench/results/${name}.json`), `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(join(root, `bench/results/${name}.md`), markdown(results));
    console.log(JSON.stringify(results, null, 2));
  } finally {
    await connection.close();
    await orm.close();
    await stopProcess(worker);
    await stopProcess(sink as ChildProcess);
    await stack.stop();
  }
}

/** Plain signed POSTs, no durability: what the machine can do at all (TOOLCHAIN.md measured ~11,700/s). */
async function signedPostCeiling(sinkUrl: string): Promise<number> {
  const hook = 'ceiling';
  const secret = 'whsec_ceiling';
  await fetch(`${sinkUrl}/secret/${hook}`, { method: 'POST', body: secret });
  const body = JSON.stringify({ event_id: randomUUID(), event_type: 'subscription.approved', data: { id: randomUUID() } });
  let n = 0;
  const until = Date.now() + 5000;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (Date.now() < until) {
        const sig = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
        const res = await fetch(`${sinkUrl}/h/${hook}`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': sig, 'x-service-event-id': randomUUID() } });
        await res.arrayBuffer();
        if (res.ok) n++;
      }
    }),
  );
  return Math.round(n / 5);
}

const round = (n: number) => Math.round(n * 10) / 10;

function markdown(r: { when: string; server: string; shape: string; load_average_at_end: number[]; throughput: { endpoints: number; deliveries_per_second: number; deliveries: number; seconds: number }[]; paced: { publish_to_first_attempt_ms: { p50: number; p99: number } }; ceiling_signed_posts_per_second: number }): string {
  const rows = r.throughput.map((t) => `| ${t.endpoints} | ${t.deliveries} | ${t.seconds} | **${t.deliveries_per_second}** | ${t.deliveries_per_second >= 200 ? 'met' : 'not met'} |`);
  const p = r.paced.publish_to_first_attempt_ms;
  return [
    '# Webhook benchmark',
    '',
    `Run ${r.when} on this 2-core machine (\`npx tsx bench/webhooks.ts\`, variant \`${VARIANT}\`). Server: ${r.server}.`,
    `Shape: ${r.shape}. Load average at the end: ${r.load_average_at_end.join(', ')} (other engineers' suites shared the 2 cores).`,
    '',
    '| endpoints per event | deliveries | seconds | deliveries/s | target ≥ 200/s |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `Publish → first attempt at 50 events/s: p50 ${p.p50} ms, p99 ${p.p99} ms (target p99 < 500 ms: ${p.p99 < 500 ? 'met' : 'not met'}).`,
    '',
    `Ceiling, plain signed POSTs to the same sink (64 keep-alive connections): ${r.ceiling_signed_posts_per_second}/s.`,
    '',
  ].join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
