import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ApiDeps } from '../deps';
import { validate } from '../middleware/validate';
import { deliveryReads } from './delivery-reads';
import { retryDelivery } from '../../webhooks';
import { attemptView, deliveryView } from './views';
import { DeliveryParams, ListDeliveriesQuery, DeliveryDetail, DeliveryList, DeliveryView } from './schema';
import { ok } from '../respond';

/**
 * spec §4.3 delivery history and manual retry; status codes and bodies in
 * docs/decisions/0071-webhook-status-codes.md.
 */
export function deliveryRoutes(router: Router, base: string, staff: Middleware, deps: ApiDeps): void {
  const reads = deliveryReads(deps.orm);
  const one = `${base}/:delivery_id`;

  router.get(
    base,
    staff,
    validate(
      {
        query: ListDeliveriesQuery,
        response: DeliveryList,
        summary:
          'List webhook deliveries (filter by endpoint_id, status, event_type, event_id, created_after, created_before)',
      },
      async (ctx, { query }) => {
        const { items, next_cursor } = await reads.list(ctx.state.principal.orgId, query);
        ok(ctx, { items: items.map(deliveryView), next_cursor });
      },
    ),
  );

  router.get(
    one,
    staff,
    validate(
      { params: DeliveryParams, response: DeliveryDetail, summary: 'Get a delivery with all its attempts' },
      async (ctx, { params }) => {
        const delivery = await reads.get(ctx.state.principal.orgId, params.delivery_id);
        const [attempts, signedBody] = await Promise.all([
          reads.attempts(delivery.id),
          reads.signedBody(delivery.event_id),
        ]);
        ok(ctx, { ...deliveryView(delivery), attempts: attempts.map(attemptView), signed_body: signedBody });
      },
    ),
  );

  router.post(
    `${one}/retry`,
    staff,
    validate(
      {
        params: DeliveryParams,
        response: DeliveryView,
        status: 202,
        summary: 'Retry a failed or exhausted delivery now',
      },
      async (ctx, { params }) => {
        const delivery = await reads.get(ctx.state.principal.orgId, params.delivery_id);
        await retryDelivery({ temporal: deps.temporal, taskQueue: deps.config.TEMPORAL_TASK_QUEUE, reads }, delivery);
        ok(ctx, deliveryView(delivery), 202);
      },
    ),
  );
}
