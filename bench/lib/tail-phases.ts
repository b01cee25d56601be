import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { publishEvents } from '../../webhooks';
import { hopBreakdown } from './hops';
import { firstAttemptLatency, paced, type PacedRun } from './paced';
import { pool, summary } from './stats';
import type { PhaseContext } from './phase-context';
import { receivedExactly } from './owed';
import { lastArrivalAt } from './sink';

/**
 * The tail's phases (docs/decisions/0303-tail-benchmark-keys-and-hop-timing.md): publish → receipt at 200
 * events/s through the API, a 5,000-message burst at 32 in flight, a neighbour beside another tenant's parked
 * deliveries, the first 30 s after /ready, and the hops of one delivery at 200/s. Each checks that every
 * delivery it owed arrived exactly once.
 */

const round = (n: number) => Math.round(n * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Steady test pings through the API to one endpoint; every one owed, its latency summarised. */
async function pingLatency(ctx: PhaseContext, phase: string, ratePerS: number, seconds: number) {
  const org = await ctx.api.org();
  const [endpoint] = await org.endpoints(1);
  const run = await paced({ ratePerS, seconds, send: () => org.ping(endpoint!) });
  if (run.failures) ctx.fail(`${phase}: ${run.failures} pings refused`);
  await receivedExactly(ctx, phase, [org.orgId], run.published.size);
  const arrivals = await ctx.sink.arrivals();
  return { run, arrivals, latency: { ...firstAttemptLatency(run, arrivals, 1), api_answer_ms: summary(run.answerMs) } };
}

/**
 * Test pings at 5/s for the first 30 s after /ready, on the fresh stack: run first, before the
 * ceilings or any other load (webhooks.ts), measured from /ready's first 200.
 */
export async function startup(ctx: PhaseContext) {
  const sinceReadyMs = Date.now() - ctx.svc.readyAt;
  const { latency } = await pingLatency(ctx, 'startup', 5, ctx.seconds(30));
  const detail = {
    ...latency,
    first_ping_after_ready_ms: sinceReadyMs,
    ready_after_start_ms: ctx.svc.readyAfterMs,
    ready: ctx.svc.readyBody,
  };
  console.log({ startup: detail });
  return { startup_p99_ms: latency.p99, detail };
}

/** Publish → receipt at 200 test pings/s through the API, one endpoint. */
async function api200(ctx: PhaseContext) {
  // The workflow shape: 15 s (3,000 pings), which it drains in minutes.
  const { latency } = await pingLatency(ctx, 'api 200/s', 200, ctx.seconds(ctx.shape === 'workflow' ? 15 : 60));
  console.log({ api_200_per_s: latency });
  return { p99_ms_at_200_events_per_s_1_endpoint: latency.p99, detail: latency };
}

/** 5,000 test pings, 32 in flight, one endpoint (as Svix was measured): publish → receipt of each. */
async function apiBurst(ctx: PhaseContext) {
  const org = await ctx.api.org();
  const [endpoint] = await org.endpoints(1);
  const run: PacedRun = { published: new Map(), answerMs: [], failures: 0 };
  const messages = ctx.count(ctx.shape === 'workflow' ? 1000 : 5000);
  const start = Date.now();
  await pool(messages, 32, async () => {
    const t0 = Date.now();
    try {
      run.published.set(await org.ping(endpoint!), t0);
      run.answerMs.push(Date.now() - t0);
    } catch {
      run.failures++;
    }
  });
  const accepted = (Date.now() - start) / 1000;
  if (run.failures) ctx.fail(`burst: ${run.failures} pings refused`);
  await receivedExactly(ctx, 'burst', [org.orgId], run.published.size);
  const arrivals = await ctx.sink.arrivals();
  const last = lastArrivalAt(arrivals);
  const latency = firstAttemptLatency(run, arrivals, 1);
  const detail = {
    ...latency,
    messages,
    clients: 32,
    accepted_per_s: round(messages / accepted),
    delivered_per_s: round(messages / ((last - start) / 1000)),
    api_answer_ms: summary(run.answerMs),
  };
  console.log({ burst: detail });
  return { burst_p99_ms_1_endpoint: latency.p99, detail };
}

/**
 * Organisation X has 8 endpoints at maxInFlight 256 and 1 delivery/s that answer 200 after 29 s,
 * and about 2,100 deliveries queued to them (the engine may hold many of them parked, waiting for
 * their pace); organisation Y sends test pings at 5/s for 2 minutes and its p99 is the key. X's
 * deliveries are owed too: the phase ends once they have all arrived (about 4.5 min at full scale).
 */
async function parkedNeighbour(ctx: PhaseContext) {
  const x = await ctx.api.org();
  const slow = await x.endpoints(8, {
    kind: 'slow',
    answerAfterMs: ctx.seconds(29) * 1000,
    maxInFlight: 256,
    rateLimitPerSecond: 1,
  });
  const y = await ctx.api.org();
  const [yEndpoint] = await y.endpoints(1);
  const events = Math.ceil(ctx.count(2100) / slow.length);
  const occurredAt = new Date().toISOString();
  await publishEvents(
    ctx.knex,
    Array.from({ length: events }, () => ({
      id: crypto.randomUUID(),
      type: 'subscription.approved',
      source: 'service.issuance',
      orgId: x.orgId,
      occurredAt,
      data: { id: crypto.randomUUID(), status: 'approved' },
    })),
    { set: 'A' },
  );
  await sleep(1000); // the dispatcher claims (and parks) X's deliveries first
  const yRun = await paced({ ratePerS: 5, seconds: ctx.seconds(120), send: () => y.ping(yEndpoint!) });
  if (yRun.failures) ctx.fail(`parked neighbour: ${yRun.failures} pings refused`);
  await sleep(2000);
  // X's backlog is hours long by design: each endpoint starts one POST a second after the one before
  // it ended, and each answer takes 29 s. Disabling X's endpoints ends what is still queued (`failed`,
  // recoverable) and lets the run go on; the POSTs already started end within the 29 s.
  await Promise.all(slow.map((id) => x.disable(id)));
  await sleep((ctx.seconds(29) + 3) * 1000);
  const neighbour = firstAttemptLatency(yRun, await ctx.sink.arrivals(), 1);
  const [xGot, yGot] = [await ctx.sink.receipts([x.orgId]), await ctx.sink.receipts([y.orgId])];
  if (neighbour.missing) ctx.fail(`parked neighbour: ${neighbour.missing} of Y's pings never arrived`);
  if (xGot.duplicates + yGot.duplicates) ctx.fail(`parked neighbour: ${xGot.duplicates + yGot.duplicates} duplicates`);
  const detail = { neighbour, parked_deliveries: events * slow.length, x_arrived_while_measured: xGot.received };
  console.log({ parked_neighbour: detail });
  return { parked_neighbour_p99_ms: neighbour.p99, detail };
}

/**
 * The hops of one delivery under a steady 200 test pings/s through the API (bench/lib/hops.ts):
 * the processes time each hop only while this phase runs (WEBHOOK_HOP_LOG_DIR and its `on` file).
 */
async function hops(ctx: PhaseContext) {
  const on = join(ctx.hopDir, 'on');
  writeFileSync(on, '');
  await sleep(1000); // each process looks for the file every 500 ms
  let result;
  try {
    result = await pingLatency(ctx, 'hops 200/s', 200, ctx.seconds(30));
  } finally {
    rmSync(on, { force: true });
  }
  await sleep(1000); // the logs' last lines flushed
  const breakdown = hopBreakdown(ctx.hopDir, result.run.published, result.arrivals);
  console.log({ hops_at_200_per_s: breakdown });
  return { hops_ms_at_200_events_per_s_1_endpoint: breakdown, detail: { latency: result.latency } };
}

export const TAIL_PHASES = { api200, apiBurst, parkedNeighbour, hops } as const;
