/**
 * Subscription benchmark: full Set A wire lifecycles through the HTTP API on the embedded
 * stack (Temporal dev server with SQLite in WAL mode, embedded PostgreSQL), worker and API as
 * separate processes. Writes bench/results/subscriptions.{json,md}; exits 1 when the projection
 * does not hold exactly the subscriptions it made, in the state it drove them to.
 *   lifecycle = create, sign-agreement, submit-for-review (wire), approve, reconcile  (5 commands)
 *   BENCH_SCALE=<fraction below 1> shortens every phase for a smoke run, which writes no results.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { runBench } from './lib/run-bench';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { AccessTokens } from '../identity';
import { freePort } from '../scripts/lib/free-port';
import { startBenchStack } from './lib/bench-stack';
import { rssMiB, startServiceProcesses } from './lib/service-processes';
import { pool, summary } from './lib/stats';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const scaled = (n: number, least: number) => Math.max(least, Math.round(n * SCALE));
const LIFECYCLES = Number(process.env.BENCH_LIFECYCLES ?? scaled(600, 10));
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const PACED_RATE = 20; // commands per second, for the latency figures
const PACED_SECONDS = Number(process.env.BENCH_PACED_SECONDS ?? scaled(30, 3));
const OPEN = Number(process.env.BENCH_OPEN ?? scaled(10_000, 10));
const WARM_UP = 20;

type Latencies = Record<string, number[]>;

/** Whether the run received and recorded exactly what it owed. */
async function main(): Promise<boolean> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tranche-bench-'));
  const stack = await startBenchStack({
    dataDir,
    database: 'tranche',
    persistent: true,
    temporalCli: process.env.TEMPORAL_CLI,
  });
  const svc = await startServiceProcesses(
    {
      DATABASE_URL: stack.databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      BEHAVIOUR_SET: 'A',
      DATABASE_POOL_MAX: '20',
    },
    await freePort(),
  );
  try {
    const tokens = await AccessTokens.create({ privateKeyPem: svc.accessTokenKeyPem, ttlSeconds: 3600 });
    const org = crypto.randomUUID();
    const staff = await tokens.sign({ userId: 'staff-1', orgId: org, roles: ['staff'], kycCompleted: true });
    const investorId = 'investor-1';
    const investor = await tokens.sign({ userId: investorId, orgId: org, roles: ['investor'], kycCompleted: true });
    const db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
    await db.query(`insert into kyc_verifications (org_id, user_id, status) values ($1, $2, 'approved')`, [
      org,
      investorId,
    ]);
    await db.end();

    const call = async (
      lat: Latencies | null,
      name: string,
      method: string,
      path: string,
      token: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ) => {
      const t0 = performance.now();
      const res = await fetch(svc.baseUrl + path, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
      const json = (await res.json()) as { data: Record<string, string> };
      if (!res.ok) throw new Error(`${name}: ${res.status} ${JSON.stringify(json)}`);
      lat?.[name]?.push(performance.now() - t0);
      return json.data;
    };
    const offering = await call(null, 'offering', 'POST', '/issuance/offerings', staff, {
      name: 'Bench',
      currency: 'USD',
    });
    const cls = await call(null, 'class', 'POST', `/issuance/offerings/${offering.id}/security-classes`, staff, {
      name: 'Common',
      pricePerUnit: '10.00',
    });

    const commands = ['create', 'sign', 'submit', 'approve', 'reconcile'];
    const fresh = (): Latencies => Object.fromEntries(commands.map((c) => [c, []]));
    let reconciledStatus = '';
    const lifecycle = async (lat: Latencies, pace?: () => Promise<void>) => {
      await pace?.();
      const s = await call(lat, 'create', 'POST', `/issuance/offerings/${offering.id}/subscriptions`, investor, {
        securityClassId: cls.id,
        unitsSubscribed: 3,
      });
      await pace?.();
      await call(lat, 'sign', 'POST', `/issuance/subscriptions/${s.id}/sign-agreement`, investor, {
        signature: 'Bench Investor',
        signedAt: new Date().toISOString(),
      });
      await pace?.();
      const submitted = await call(
        lat,
        'submit',
        'POST',
        `/issuance/subscriptions/${s.id}/submit-for-review`,
        investor,
        { paymentMethod: 'wire' },
      );
      await pace?.();
      await call(lat, 'approve', 'POST', `/issuance/subscriptions/${s.id}/approve`, staff, {});
      await pace?.();
      // Required where money moves (docs/decisions/0373-idempotency-key-required-where-money-moves.md).
      const reconciled = await call(
        lat,
        'reconcile',
        'POST',
        '/issuance/reconciliations',
        staff,
        { referenceCode: submitted.reference_code, amount: '30.00' },
        { 'idempotency-key': randomUUID() },
      );
      reconciledStatus = reconciled.status!;
    };

    // 1. Throughput: as many full lifecycles as CONCURRENCY clients can drive.
    await pool(WARM_UP, 8, () => lifecycle(fresh())); // warm-up
    const throughputLat = fresh();
    const t0 = performance.now();
    await pool(LIFECYCLES, CONCURRENCY, () => lifecycle(throughputLat));
    const seconds = (performance.now() - t0) / 1000;

    // 2. Latency at a steady 20 commands per second.
    const pacedLat = fresh();
    let tick = performance.now();
    const pace = async () => {
      tick += 1000 / PACED_RATE;
      const wait = tick - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    };
    const pacedLifecycles = Math.round((PACED_RATE * PACED_SECONDS) / commands.length);
    await pool(pacedLifecycles, 1, () => lifecycle(pacedLat, pace));

    // 3. Worker memory with OPEN subscriptions waiting (drafts, each an open workflow).
    const rssBefore = rssMiB(svc.workerPid);
    const openStart = performance.now();
    await pool(OPEN, 64, async () => {
      await call(null, 'create', 'POST', `/issuance/offerings/${offering.id}/subscriptions`, investor, {
        securityClassId: cls.id,
        unitsSubscribed: 1,
      });
    });
    const openSeconds = (performance.now() - openStart) / 1000;
    await new Promise((r) => setTimeout(r, 3000));
    const rssOpen = rssMiB(svc.workerPid);
    const made = await projected(stack.databaseUrl, org, reconciledStatus, {
      reconciled: WARM_UP + LIFECYCLES + pacedLifecycles,
      all: WARM_UP + LIFECYCLES + pacedLifecycles + OPEN,
    });

    const result = {
      when: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      server:
        stack.server ??
        'temporal server start-dev (CLI 1.5.1, server 1.29.1), SQLite file, WAL, synchronous=NORMAL; embedded PostgreSQL 18',
      lifecycle: commands,
      throughput: {
        lifecycles: LIFECYCLES,
        concurrency: CONCURRENCY,
        seconds: Math.round(seconds * 10) / 10,
        lifecycles_per_second: Math.round((LIFECYCLES / seconds) * 10) / 10,
        commands_per_second: Math.round(((LIFECYCLES * 5) / seconds) * 10) / 10,
        latency_ms: Object.fromEntries(commands.map((c) => [c, summary(throughputLat[c]!)])),
      },
      paced: {
        commands_per_second: PACED_RATE,
        lifecycles: pacedLifecycles,
        latency_ms: Object.fromEntries(commands.map((c) => [c, summary(pacedLat[c]!)])),
      },
      open_subscriptions: {
        count: OPEN,
        created_per_second: Math.round((OPEN / openSeconds) * 10) / 10,
        worker_rss_mib_before: rssBefore,
        worker_rss_mib_with_open: rssOpen,
      },
      targets: { lifecycles_per_second: 50, paced_p99_ms: 150, worker_rss_mib: 500 },
      scale: SCALE,
      projected: made,
    };
    if (SCALE === 1) write(result, stack.suffix);
    console.log(JSON.stringify(result, null, 2));
    if (!made.exact) {
      console.error(
        `[bench] FAILED: the projection holds ${JSON.stringify(made.got)}, owed ${JSON.stringify(made.owed)}`,
      );
      return false;
    }
    return true;
  } finally {
    await svc.stop();
    await stack.stop();
  }
}

/** Waits (60 s at most) until the projection holds exactly what was owed: `reconciled` in that state, `all` in all. */
async function projected(databaseUrl: string, org: string, status: string, owed: { reconciled: number; all: number }) {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { rows } = await db.query<{ reconciled: string; all: string }>(
        'select count(*) filter (where status = $2) as reconciled, count(*) as all from subscriptions where org_id = $1',
        [org, status],
      );
      const got = { reconciled: Number(rows[0]!.reconciled), all: Number(rows[0]!.all) };
      const exact = got.reconciled === owed.reconciled && got.all === owed.all;
      if (exact || Date.now() > deadline) return { exact, status, owed, got };
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await db.end();
  }
}

function write(result: Record<string, any>, suffix: string): void {
  const dir = join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `subscriptions${suffix}.json`), JSON.stringify(result, null, 2) + '\n');
  const rows = (lat: Record<string, ReturnType<typeof summary>>) =>
    Object.entries(lat)
      .map(([c, s]) => `| ${c} | ${s.n} | ${s.p50} | ${s.p90} | ${s.p99} | ${s.max} |`)
      .join('\n');
  writeFileSync(
    join(dir, `subscriptions${suffix}.md`),
    `# Subscription benchmark (${result.when})

${result.machine.cpus} cores, ${result.machine.model}, Node ${result.machine.node}. Server: ${result.server}.
A lifecycle is ${result.lifecycle.join(' → ')} through the HTTP API (Set A, wire).

- Throughput: **${result.throughput.lifecycles_per_second} lifecycles/s** (${result.throughput.commands_per_second} commands/s), ${result.throughput.lifecycles} lifecycles by ${result.throughput.concurrency} concurrent clients in ${result.throughput.seconds} s (target ≥ 50).
- Worker RSS: ${result.open_subscriptions.worker_rss_mib_before} MiB before, **${result.open_subscriptions.worker_rss_mib_with_open} MiB with ${result.open_subscriptions.count} open subscriptions** (target < 500); they were created at ${result.open_subscriptions.created_per_second}/s.

Latency at ${result.paced.commands_per_second} commands/s (target p99 < 150 ms), ms:

| command | n | p50 | p90 | p99 | max |
|---|---|---|---|---|---|
${rows(result.paced.latency_ms)}

Latency under full load (${result.throughput.concurrency} clients), ms:

| command | n | p50 | p90 | p99 | max |
|---|---|---|---|---|---|
${rows(result.throughput.latency_ms)}
`,
  );
}

runBench(main);
