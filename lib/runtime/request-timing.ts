import { AsyncLocalStorage } from 'node:async_hooks';
import type { Middleware } from 'koa';

/**
 * Where a request's milliseconds go, layer by layer of the API path, for the client benchmark's slowest 1 %
 * (bench/client.ts; docs/decisions/0393-client-benchmark-and-request-timing.md). On only with
 * API_REQUEST_TIMING (development and test; production refuses it: the header tells every caller how long each
 * check took). Off, `timed` is one boolean test and no scope is ever opened.
 *
 * Each layer's figure is its own time: a layer timed inside another (the route inside the Idempotency-Key's
 * claim and kept answer) is taken out of the outer one. What no layer claims (Koa, the body parser, the router,
 * the request's scope) is `other`; `total` is the whole, measured by the outermost middleware, so the client's
 * time minus `total` is what the request spent outside the application (the socket, the event loop's queue).
 */
export type Layer =
  /** The write limit: the token verified for its key, and the counter's statement (api/middleware/write-rate-limit.ts). */
  | 'rate_limit'
  /** The bearer token's signature and claims (api/middleware/auth.ts). */
  | 'auth'
  /** Whether the token's API key or console session is still live (identity/token-liveness.ts). */
  | 'liveness'
  /** The Idempotency-Key's claim, its request hash, and its kept (sealed) answer (api/middleware/idempotency.ts). */
  | 'idempotency'
  /** The route itself: the request's validation, the handler, the answer's schema. */
  | 'route'
  /** Waiting for the publish statement in flight to end, so the next one carries this event (lib/group-commit.ts). */
  | 'publish_wait'
  /** The statement that stores the event and its delivery: one statement, its commit included (webhooks/events/aimed-publish.ts). */
  | 'publish_statement'
  /** Opening the personal fields of the answer (api/personal/open-personal.ts). */
  | 'personal'
  /** JSON.stringify of the answer, which Koa would otherwise do after every middleware has returned. */
  | 'serialise';

interface Frame {
  start: number;
  /** Time spent in layers timed inside this one. */
  inner: number;
}

/** One request's layers so far; passed by hand to work that runs in another request's scope (a group commit). */
export interface RequestTimes {
  readonly ms: Partial<Record<Layer, number>>;
  readonly open: Frame[];
}

const scope = new AsyncLocalStorage<RequestTimes>();
let on = false;

/** This request's times, when timing is on and a request is being served. */
export const currentTimes = (): RequestTimes | undefined => (on ? scope.getStore() : undefined);

/** Runs `work` as `layer` of the current request: its time, less that of layers inside it, counts to the layer. */
export function timed<T>(layer: Layer, work: () => Promise<T>): Promise<T> {
  const times = currentTimes();
  return times ? measure(times, layer, work) : work();
}

async function measure<T>(times: RequestTimes, layer: Layer, work: () => Promise<T>): Promise<T> {
  const frame: Frame = { start: performance.now(), inner: 0 };
  times.open.push(frame);
  try {
    return await work();
  } finally {
    const ms = performance.now() - frame.start;
    times.open.splice(times.open.lastIndexOf(frame), 1);
    addTime(times, layer, ms - frame.inner, ms);
  }
}

/** Adds `ms` to the layer, and `whole` (default `ms`) to the time of the layer it ran inside. */
export function addTime(times: RequestTimes, layer: Layer, ms: number, whole = ms): void {
  times.ms[layer] = (times.ms[layer] ?? 0) + ms;
  const outer = times.open[times.open.length - 1];
  if (outer) outer.inner += whole;
}

/**
 * The outermost middleware when API_REQUEST_TIMING is on (server/app.ts): opens the request's scope, serialises
 * a JSON answer itself so that its cost is seen, and answers `Server-Timing: auth;dur=0.41, …, other;dur=…,
 * total;dur=…` in milliseconds.
 */
export function requestTiming(): Middleware {
  on = true;
  return async (ctx, next) => {
    const times: RequestTimes = { ms: {}, open: [] };
    const start = performance.now();
    try {
      await scope.run(times, next);
    } finally {
      const body: unknown = ctx.body;
      if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && !('pipe' in body)) {
        const t = performance.now();
        // The content type stays the JSON one the object set.
        ctx.body = JSON.stringify(body);
        addTime(times, 'serialise', performance.now() - t);
      }
      const total = performance.now() - start;
      const layers = Object.entries(times.ms) as [Layer, number][];
      const other = total - layers.reduce((sum, [, ms]) => sum + ms, 0);
      ctx.set(
        'Server-Timing',
        [...layers, ['other', other] as const, ['total', total] as const]
          .map(([name, ms]) => `${name};dur=${Math.max(0, ms).toFixed(2)}`)
          .join(', '),
      );
    }
  };
}
