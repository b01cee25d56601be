import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { ApiDeps } from '../deps';
import { validate } from '../middleware/validate';
import { deliveryReads, retryDelivery } from '../../webhooks';
import { attemptView, deliveryView } from './views';
import { DeliveryParams, ListDeliveriesQuery } from './schema';
import { DeliveryDetail, DeliveryList, DeliveryView } from './answer-schema';
import { ok } from '../respond';
import { byCreation, page, positionAfter } from '../cursor';
import { recordCommand, type AuditSpec } from '../audit/audit-recorder';

/**
 * spec §4.3 delivery history and manual retry; status codes and bodies in
 * docs/decisions/0071-webhook-status-codes.md. A manual retry is audited (`webhook_delivery.retry`).
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
        const { cursor, ...filter } = query;
        const rows = await reads.list(ctx.state.principal.orgId, { ...filter, after: positionAfter(cursor) });
        const { items, next_cursor } = page(rows, query.limit, byCreation);
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
        const [attempts, signedBody] = await Promise.all([reads.attempts(delivery.id), reads.signedBody(delivery)]);
        ok(ctx, {
          ...deliveryView(delivery),
          attempts: attempts.map(attemptView),
          payload_version: delivery.payload_version,
          signed_body: signedBody,
        });
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
        // A signal or a new run of the delivery workflow, no row of ours: audited once Temporal answers
        // (docs/decisions/0206-audit-same-transaction-as-the-change.md); the status moves with the attempt.
        const spec: AuditSpec = {
          action: 'webhook_delivery.retry',
          subject: { type: 'webhook_delivery', id: params.delivery_id },
        };
        const delivery = await recordCommand(
          deps.orm,
          ctx,
          spec,
          async (seen) => {
            const found = await reads.get(ctx.state.principal.orgId, params.delivery_id);
            seen.before = { status: found.status };
            const retry = { temporal: deps.temporal, taskQueue: deps.config.TEMPORAL_TASK_QUEUE, reads };
            await retryDelivery(retry, found);
            return found;
          },
          (d) => ({ status: d.status, retry: 'requested' }),
        );
        ok(ctx, deliveryView(delivery), 202);
      },
    ),
  );
}
