import type { ClientTarget, TargetOrg } from './client-target';
import { slowestLayers, type TimedAnswer } from './layer-shares';
import { receivedExactly } from './owed';
import { firstAttemptLatency, paced, type PacedRun } from './paced';
import type { Arrival, Sink } from './sink';
import { pool, summary } from './stats';

/**
 * The client benchmark's measurements, the Svix harness's own (../shared/peers/svix/loadgen.js and noisy.js),
 * against any system through its public API (client-target.ts): a burst of 5,000 messages to one endpoint at
 * 32 in flight, 1,000 messages at 50/s and 4,000 at 200/s to one endpoint, and a healthy organisation at 5/s
 * alone for 30 s, then 30 s more while another sends 10/s to an endpoint that never answers. Every message
 * the sink is owed must arrive exactly once (docs/decisions/0393-client-benchmark-and-request-timing.md).
 */

export interface ClientContext {
  target: ClientTarget;
  sink: Sink;
  seconds(s: number): number;
  count(n: number): number;
  fail(message: string): void;
}

const round = (n: number) => Math.round(n * 10) / 10;

/** A new organisation with one endpoint that answers at once. */
async function orgWithEndpoint(ctx: ClientContext): Promise<[TargetOrg, string]> {
  const org = await ctx.target.org();
  return [org, await org.endpoint('h')];
}

/** Publishes to the endpoint, noting each answer's time and the API's timing header. */
function publisher(org: TargetOrg, endpointId: string, answers: TimedAnswer[]) {
  return async () => {
    const t0 = performance.now();
    const { eventId, serverTiming } = await org.publish(endpointId);
    answers.push({ clientMs: performance.now() - t0, serverTiming });
    return eventId;
  };
}

/** The arrivals of this run's events only (the sink's list holds every organisation's). */
const ofRun = (run: PacedRun, arrivals: readonly Arrival[]) => arrivals.filter(([, e]) => run.published.has(e));

/** Steady messages to one endpoint, every one owed, then what the receipts and the answers came to. */
async function steady(ctx: ClientContext, phase: string, org: TargetOrg, endpointId: string, rate: number, s: number) {
  const answers: TimedAnswer[] = [];
  let firstError = '';
  const send = publisher(org, endpointId, answers);
  const run = await paced({
    ratePerS: rate,
    seconds: s,
    send: () =>
      send().catch((err: Error) => {
        firstError ||= err.message;
        throw err;
      }),
  });
  if (run.failures) ctx.fail(`${phase}: ${run.failures} messages refused (${firstError})`);
  return { run, answers };
}

/** Warms the system for `s` seconds at 20 messages/s, as each run starts fresh. */
export async function warmUp(ctx: ClientContext, s: number) {
  const [org, endpoint] = await orgWithEndpoint(ctx);
  const { run } = await steady(ctx, 'warm-up', org, endpoint, 20, s);
  await receivedExactly(ctx, 'warm-up', [org.id], run.published.size);
  await ctx.sink.arrivals();
}

/** 5,000 messages to one endpoint, 32 in flight: accepted/s, delivered/s and publish → receipt. */
async function burst(ctx: ClientContext) {
  const [org, endpoint] = await orgWithEndpoint(ctx);
  await ctx.sink.arrivals();
  const answers: TimedAnswer[] = [];
  const send = publisher(org, endpoint, answers);
  const run: PacedRun = { published: new Map(), answerMs: [], failures: 0 };
  const messages = ctx.count(5000);
  let firstError = '';
  const start = Date.now();
  let lastAccepted = start;
  await pool(messages, 32, async () => {
    const t0 = Date.now();
    try {
      run.published.set(await send(), t0);
      lastAccepted = Date.now();
    } catch (err) {
      run.failures++;
      firstError ||= (err as Error).message;
    }
  });
  if (run.failures) ctx.fail(`burst: ${run.failures} messages refused (${firstError})`);
  await receivedExactly(ctx, 'burst', [org.id], run.published.size);
  const arrivals = ofRun(run, await ctx.sink.arrivals());
  const last = arrivals.reduce((at, [, , a]) => Math.max(at, a), start);
  const latency = firstAttemptLatency(run, arrivals, 1);
  const answered = summary(answers.map((a) => a.clientMs));
  return {
    figures: {
      burst_accepted_per_s: round(run.published.size / ((lastAccepted - start) / 1000)),
      burst_delivered_per_s: round(arrivals.length / ((last - start) / 1000)),
      burst_p50_ms: latency.p50,
      burst_p99_ms: latency.p99,
      burst_answer_p99_ms: answered.p99,
    },
    detail: { messages, clients: 32, latency, answer_ms: answered, layers: slowestLayers(answers) },
    messages,
  };
}

/** Messages at `rate`/s to one endpoint for `seconds` (the harness: 1,000 at 50/s, 4,000 at 200/s). */
async function pacedAt(ctx: ClientContext, rate: 50 | 200) {
  const [org, endpoint] = await orgWithEndpoint(ctx);
  await ctx.sink.arrivals();
  const { run, answers } = await steady(ctx, `${rate}/s`, org, endpoint, rate, ctx.seconds(20));
  await receivedExactly(ctx, `${rate}/s`, [org.id], run.published.size);
  const latency = firstAttemptLatency(run, ofRun(run, await ctx.sink.arrivals()), 1);
  const answered = summary(answers.map((a) => a.clientMs));
  return {
    figures: {
      [`paced${rate}_p50_ms`]: latency.p50,
      [`paced${rate}_p99_ms`]: latency.p99,
      [`paced${rate}_answer_p99_ms`]: answered.p99,
    },
    detail: { rate_per_s: rate, latency, answer_ms: answered, layers: slowestLayers(answers) },
    messages: run.published.size,
  };
}

/** A healthy organisation at 5/s alone, then beside another sending 10/s to an endpoint that never answers. */
async function noisyNeighbour(ctx: ClientContext) {
  const [y, healthy] = await orgWithEndpoint(ctx);
  await ctx.sink.arrivals();
  const alone = await steady(ctx, 'noisy, alone', y, healthy, 5, ctx.seconds(30));
  await receivedExactly(ctx, 'noisy, alone', [y.id], alone.run.published.size);
  const aloneLatency = firstAttemptLatency(alone.run, ofRun(alone.run, await ctx.sink.arrivals()), 1);
  const x = await ctx.target.org();
  const hanging = await x.endpoint('hang');
  const [beside, noisy] = await Promise.all([
    steady(ctx, 'noisy, beside', y, healthy, 5, ctx.seconds(30)),
    steady(ctx, 'noisy, the hanging organisation', x, hanging, 10, ctx.seconds(30)),
  ]);
  await receivedExactly(ctx, 'noisy, beside', [y.id], alone.run.published.size + beside.run.published.size);
  const besideLatency = firstAttemptLatency(beside.run, ofRun(beside.run, await ctx.sink.arrivals()), 1);
  // What is still owed to the endpoint that never answers ends here, so it does not weigh on what follows.
  await x.disable(hanging);
  return {
    figures: {
      noisy_alone_p50_ms: aloneLatency.p50,
      noisy_alone_p99_ms: aloneLatency.p99,
      noisy_beside_p50_ms: besideLatency.p50,
      noisy_beside_p99_ms: besideLatency.p99,
    },
    detail: {
      alone: aloneLatency,
      beside: besideLatency,
      hanging_messages: noisy.run.published.size,
      layers_beside: slowestLayers(beside.answers),
    },
    messages: alone.run.published.size + beside.run.published.size + noisy.run.published.size,
  };
}

/** In the order a run takes them. */
export const CLIENT_PHASES = {
  burst,
  paced50: (ctx: ClientContext) => pacedAt(ctx, 50),
  paced200: (ctx: ClientContext) => pacedAt(ctx, 200),
  noisy: noisyNeighbour,
} as const;
