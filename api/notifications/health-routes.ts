import Router from '@koa/router';
import { z } from 'zod';
import { notFound } from '../../lib/errors';
import type { ApiDeps } from '../deps';
import { auth } from '../middleware/auth';
import { validate } from '../middleware/validate';
import { NOTIFICATION_PATHS } from './paths';
import { ok } from '../respond';
import { EndpointHealthView } from './answer-schema';
import { deliveryView } from './views';
import { endpointHealth, type AttemptBucket } from '../../webhooks';

const HealthParams = z.object({ id: z.uuid() });
/** The window looked back over and the width of each point of the success-rate series. */
const HealthQuery = z.strictObject({
  hours: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 14)
    .default(24),
  bucket_minutes: z.enum(['5', '15', '60', '360', '1440']).default('60').transform(Number),
});

/**
 * An endpoint's delivery health for the operator console (docs/decisions/0106-console-success-rate.md):
 * attempts and 2xx answers per time bucket, the latest failed attempts with their response codes, and the
 * deliveries waiting on a scheduled retry. Staff and admins of the endpoint's organisation, like the rest of
 * §4.3.
 */
export function endpointHealthRouter(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/notifications' });
  const staff = auth(deps.tokens, 'staff', 'admin');
  const base = NOTIFICATION_PATHS[deps.config.BEHAVIOUR_SET].endpoints;

  router.get(
    `${base}/:id/health`,
    staff,
    validate(
      {
        params: HealthParams,
        query: HealthQuery,
        response: EndpointHealthView,
        summary: "A webhook endpoint's delivery health: success rate over time, latest failures, retries waiting",
      },
      async (ctx, { params, query }) => {
        const seconds = query.bucket_minutes * 60;
        const since = new Date(Math.floor((Date.now() - query.hours * 3600_000) / (seconds * 1000)) * seconds * 1000);
        const health = await endpointHealth(deps.orm, ctx.state.principal.orgId, params.id, { since, seconds });
        if (!health) throw notFound('Webhook endpoint');
        const { buckets, failures, waiting } = health;

        const series = fillBuckets(
          buckets,
          since.getTime() / 1000 / seconds,
          Math.floor(Date.now() / 1000 / seconds),
          seconds,
        );
        const total = series.reduce((n, b) => n + b.attempts, 0);
        const succeeded = series.reduce((n, b) => n + b.succeeded, 0);
        ok(ctx, {
          endpoint_id: params.id,
          bucket_minutes: query.bucket_minutes,
          attempts: total,
          succeeded,
          success_rate: total ? succeeded / total : null,
          series,
          recent_failures: failures.map((f) => ({
            delivery_id: f.delivery_id,
            event_type: f.event_type,
            delivery_status: f.status,
            attempt: f.number,
            attempted_at: new Date(f.attempted_at).toISOString(),
            response_status: f.response_status,
            error: f.error,
          })),
          waiting_on_retry: waiting.map(deliveryView),
        });
      },
    ),
  );
  return router;
}

/** One point per bucket in the window, empty ones included, so a chart's gaps mean silence. */
function fillBuckets(rows: AttemptBucket[], first: number, last: number, seconds: number) {
  const byBucket = new Map(rows.map((r) => [Number(r.bucket), r]));
  const out: { start: string; attempts: number; succeeded: number; success_rate: number | null }[] = [];
  for (let b = first; b <= last; b++) {
    const r = byBucket.get(b);
    const attempts = r ? Number(r.attempts) : 0;
    const succeeded = r ? Number(r.succeeded) : 0;
    out.push({
      start: new Date(b * seconds * 1000).toISOString(),
      attempts,
      succeeded,
      success_rate: attempts ? succeeded / attempts : null,
    });
  }
  return out;
}
