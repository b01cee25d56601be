import Router from '@koa/router';
import { z } from 'zod';
import type { SubscriptionState } from '../../domain/subscription';
import { toSubscriptionView } from '../../domain/subscription-view';
import type { ApiDeps } from '../deps';
import { auth } from '../middleware/auth';
import { validate } from '../middleware/validate';
import { ok } from '../respond';
import { exactTime } from '../../db/keyset';
import { decodeCursor, page } from '../cursor';
import { deliveryView } from '../notifications/views';
import { deliveryReads, eventReads } from '../../webhooks';
import { AttentionList, RefundIntents, ReviewQueue, SubscriptionActivity, SubscriptionParams } from './schema';
import { listAttention } from '../../db/subscription-attention';
import { intentsOf } from '../../db/refund-intents';
import { subscriptionReads } from './subscription-reads';

const ReviewQueueQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(100),
  cursor: z.string().max(200).optional(),
});
const AttentionQuery = ReviewQueueQuery;

interface QueueRow {
  state: SubscriptionState;
  review_since: Date;
  cursor_at: string;
  kyc_status: string | null;
  accreditation_status: string | null;
}

/**
 * Staff reads behind the operator console (docs/decisions/0104-console-read-routes.md): the
 * review queue with what a reviewer weighs, and a subscription's events and deliveries. Same token, roles and organisation scoping as the routes they sit beside.
 */
export function reviewRouter(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/issuance' });
  const staff = auth(deps.tokens, 'staff', 'admin');
  const reads = subscriptionReads(deps.orm);
  const events = eventReads(deps.orm);
  const deliveries = deliveryReads(deps.orm);
  const sql = () => deps.orm.em.getConnection();

  router.get(
    '/review-queue',
    staff,
    validate(
      {
        query: ReviewQueueQuery,
        response: ReviewQueue,
        summary: 'Subscriptions waiting on review, with what a reviewer weighs',
      },
      async (ctx, { query }) => {
        const orgId = ctx.state.principal.orgId;
        const after = query.cursor ? decodeCursor(query.cursor) : null;
        const rows = await sql().execute<QueueRow[]>(
          `select s.state, s.review_since, ${exactTime('s.review_since')} as cursor_at, k.status as kyc_status,
              (select a.status from accreditations a where a.org_id = s.org_id and a.user_id = s.investor_id
                order by a.created_at desc limit 1) as accreditation_status
         from subscriptions s
         left join kyc_verifications k on k.org_id = s.org_id and k.user_id = s.investor_id
        where s.org_id = ? and s.status = 'pending_review'
          ${after ? 'and (s.review_since, s.id) > (?::timestamptz, ?::uuid)' : ''}
        order by s.review_since asc, s.id asc
        limit ?`,
          [orgId, ...(after ? [after.at, after.id] : []), query.limit + 1],
        );
        const now = Date.now();
        const { items, next_cursor } = page(rows, query.limit, (r) => ({ at: r.cursor_at, id: r.state.id }));
        ok(ctx, {
          next_cursor,
          items: items.map((r) => ({
            subscription: toSubscriptionView(r.state),
            investor_id: r.state.investorId,
            kyc_status: r.kyc_status ?? 'none',
            accreditation_status: r.accreditation_status ?? 'none',
            accreditation_self_reported: r.state.accreditationStatus,
            review_since: new Date(r.review_since).toISOString(),
            waiting_seconds: Math.max(0, Math.floor((now - new Date(r.review_since).getTime()) / 1000)),
          })),
        });
      },
    ),
  );

  router.get(
    '/subscriptions/:subscription_id/activity',
    staff,
    validate(
      {
        params: SubscriptionParams,
        response: SubscriptionActivity,
        summary: "A subscription's events and their webhook deliveries",
      },
      async (ctx, { params }) => {
        const record = await reads.authorized(params.subscription_id, ctx.state.principal, 'read');
        const happened = await events.ofSubscription(record.orgId, record.id);
        const sent = happened.length
          ? await deliveries.ofEvents(
              record.orgId,
              happened.map((e) => e.id),
            )
          : [];
        ok(ctx, {
          events: happened.map((e) => ({
            id: e.id,
            type: e.type,
            occurred_at: new Date(e.occurred_at).toISOString(),
            status: typeof e.data.status === 'string' ? e.data.status : null,
            payment_status: typeof e.data.payment_status === 'string' ? e.data.payment_status : null,
            reason: typeof e.data.reason === 'string' ? e.data.reason : null,
            message: typeof e.data.message === 'string' ? e.data.message : null,
          })),
          deliveries: sent.map((d) => ({
            ...deliveryView(d),
            endpoint_url: d.endpoint_url,
          })),
        });
      },
    ),
  );

  router.get(
    '/attention',
    staff,
    validate(
      {
        query: AttentionQuery,
        response: AttentionList,
        summary:
          'Subscriptions needing attention: the last step failed for good or keeps failing (docs/operators/runbooks.md says what to do)',
      },
      async (ctx, { query }) => {
        const after = query.cursor ? decodeCursor(query.cursor) : undefined;
        const rows = await listAttention(deps.orm.em.getConnection().getKnex(), ctx.state.principal.orgId, {
          limit: query.limit + 1,
          ...(after && { after }),
        });
        const { items, next_cursor } = page(rows, query.limit, (r) => ({ at: r.cursor_at, id: r.subscription_id }));
        ok(ctx, {
          next_cursor,
          items: items.map((r) => ({
            subscription_id: r.subscription_id,
            status: r.status,
            step: r.step,
            failure: r.failure,
            sqlstate: r.sqlstate,
            constraint: r.constraint_name,
            failed_attempts: r.failed_attempts,
            first_failed_at: new Date(r.first_failed_at).toISOString(),
            last_failed_at: new Date(r.last_failed_at).toISOString(),
          })),
        });
      },
    ),
  );

  // What each refund asked of the processor and what it answered (docs/decisions/0374-refund-intents.md).
  router.get(
    '/subscriptions/:subscription_id/refunds',
    staff,
    validate(
      {
        params: SubscriptionParams,
        response: RefundIntents,
        summary: "A subscription's refund intents: each processor refund, recorded before it was sent, and its outcome",
      },
      async (ctx, { params }) => {
        const record = await reads.authorized(params.subscription_id, ctx.state.principal, 'read');
        ok(ctx, { items: await intentsOf(sql().getKnex(), record.orgId, record.id) });
      },
    ),
  );

  return router;
}
