import type { Middleware } from 'koa';
import { trace } from '@opentelemetry/api';
import { httpDuration, httpRequests } from '../../lib/runtime/metrics';

/**
 * Counts and times every request by its route template (`/issuance/subscriptions/:subscription_id`),
 * never its raw path (and names its trace span so), so ids cannot blow up the number of series. Runs outermost, so the status it
 * records is the one the error envelope finally answered with.
 */
export function httpMetrics(): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      const labels = {
        method: ctx.method,
        route: typeof matched === 'string' ? matched : 'unmatched',
        status: String(ctx.status),
      };
      httpRequests.inc(labels);
      // Traced (issue 21), the request's span is named by its route, as its metrics are labelled.
      trace.getActiveSpan()?.updateName(`${labels.method} ${labels.route}`).setAttribute('http.route', labels.route);
      httpDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}
