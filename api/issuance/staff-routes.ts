import type Router from '@koa/router';
import { validationFailed } from '../../lib/errors';
import { currencyPlaces, toMinor } from '../../lib/money';
import { authorizeApproval } from '../../domain/policy';
import * as m from '../../domain/subscription-messages';
import { toSubscriptionView } from '../../domain/subscription-view';
import { SubscriptionViewSchema as View } from '../../domain/subscription-view-schema';
import { keyRequired } from '../middleware/idempotency-required';
import { validate, type Ctx } from '../middleware/validate';
import { ok } from '../respond';
import { ReasonBody, ReconcileBody, ReferenceCodeParams, RefundBody, SubscriptionParams } from './schema';
import type { SubscriptionKit } from './subscription-kit';
import { cutToCodePoints } from '../../lib/text';

/**
 * Staff's decisions on a subscription: approve, reject, ask for information, cancel before review, void, refund, and the
 * set's own (issue shares in B; collect again and reconcile in A). Each is audited
 * (docs/decisions/0009-staff-operations.md).
 */
export function staffRoutes(router: Router, kit: SubscriptionKit): void {
  const { deps, set, reads, workflows, may, staffDecision, command } = kit;

  router.post(
    '/subscriptions/:subscription_id/approve',
    may('approve'),
    validate(
      { params: SubscriptionParams, response: View, summary: 'Approve a subscription under review (staff)' },
      async (ctx, input) => {
        const p = ctx.state.principal;
        const approved = await staffDecision(ctx, 'approve', input.params.subscription_id, async (seen) => {
          const record = await reads.authorized(input.params.subscription_id, p, 'read');
          seen(record);
          authorizeApproval(p, record, await deps.kyc.isApproved(record.investorId, record.orgId));
          return workflows.command(record.id, m.approve, { actorId: p.userId });
        });
        ok(ctx, approved);
      },
    ),
  );

  const reason = (ctx: Ctx, body: { reason: string }) =>
    [{ reason: body.reason, actorId: ctx.state.principal.userId }] as [m.ReasonInput];
  router.post(
    '/subscriptions/:subscription_id/reject',
    may('reject'),
    validate(
      {
        params: SubscriptionParams,
        body: ReasonBody,
        response: View,
        summary: 'Reject a subscription under review, with a reason (staff)',
      },
      command('reject', m.reject, reason, true),
    ),
  );
  router.post(
    '/subscriptions/:subscription_id/request-info',
    may('request_info'),
    validate(
      {
        params: SubscriptionParams,
        body: ReasonBody,
        response: View,
        summary: 'Ask the investor for more information (staff)',
      },
      command('request_info', m.requestInfo, reason, true),
    ),
  );
  // The investor's DELETE stays theirs (spec §3); staff end one before review here, with a reason
  // (docs/decisions/0369-staff-cancel-before-review.md).
  router.post(
    '/subscriptions/:subscription_id/cancel',
    may('staff_cancel'),
    validate(
      {
        params: SubscriptionParams,
        body: ReasonBody,
        response: View,
        summary:
          'Cancel a subscription not yet in review (draft, pending_signature, pending_payment), with a reason (staff)',
      },
      async (ctx, input) => {
        const { reason } = input.body;
        const cancelled = await staffDecision(
          ctx,
          'staff_cancel',
          input.params.subscription_id,
          async (seen) => {
            const record = await reads.authorized(input.params.subscription_id, ctx.state.principal, 'staff_cancel');
            seen(record);
            return workflows.command(record.id, m.cancelByStaff, { reason, actorId: ctx.state.principal.userId });
          },
          (view) => ({ status: view.status, reason: cutToCodePoints(reason, 200) }),
        );
        ok(ctx, cancelled);
      },
    ),
  );
  router.post(
    '/subscriptions/:subscription_id/void',
    may('void'),
    validate(
      { params: SubscriptionParams, body: ReasonBody, response: View, summary: 'Void the signed agreement (admin)' },
      command('void', m.voidAgreement, reason, true),
    ),
  );

  // Money back through the deployment's processor (docs/decisions/0284-refunds.md); both sets. Only under an
  // Idempotency-Key (docs/decisions/0373-idempotency-key-required-where-money-moves.md), which the refund's
  // intents record (docs/decisions/0374-refund-intents.md).
  router.post(
    '/subscriptions/:subscription_id/refund',
    may('refund'),
    keyRequired(),
    validate(
      {
        params: SubscriptionParams,
        body: RefundBody,
        response: View,
        summary:
          'Refund money taken: a held payment, or the payment of a cancelled, rejected or voided subscription (admin)',
      },
      async (ctx, input) => {
        const { amount, reason } = input.body;
        const refunded = await staffDecision(
          ctx,
          'refund',
          input.params.subscription_id,
          async (seen) => {
            const record = await reads.authorized(input.params.subscription_id, ctx.state.principal, 'refund');
            seen(record);
            if (amount !== undefined && toMinor(amount, record.state.currency) === null) {
              throw validationFailed([
                {
                  in: 'body',
                  path: 'amount',
                  message: `${record.state.currency} ${currencyPlaces(record.state.currency)}`,
                },
              ]);
            }
            return workflows.command(record.id, m.refund, {
              ...(amount !== undefined ? { amount } : {}),
              reason,
              actorId: ctx.state.principal.userId,
              requestKey: ctx.get('idempotency-key'),
            });
          },
          (view) => ({
            status: view.status,
            payment_status: view.payment_status,
            amount_received: view.amount_received ?? null,
            amount_refunded: view.amount_refunded ?? null,
            requested: amount ?? 'all',
            reason: cutToCodePoints(reason, 200),
          }),
        );
        ok(ctx, refunded);
      },
    ),
  );

  const actor = (ctx: Ctx) => [{ actorId: ctx.state.principal.userId }] as [{ actorId: string }];
  if (set === 'B') {
    router.post(
      '/subscriptions/:subscription_id/issue-shares',
      may('issue_shares'),
      validate(
        {
          params: SubscriptionParams,
          response: View,
          summary: 'Issue shares for an approved subscription (Set B, staff)',
        },
        command('issue_shares', m.issueShares, actor, true),
      ),
    );
  } else {
    router.post(
      '/subscriptions/:subscription_id/retry-collection',
      may('retry_collection'),
      keyRequired(),
      validate(
        { params: SubscriptionParams, response: View, summary: 'Collect a failed payment again (Set A, staff)' },
        command('retry_collection', m.retryCollection, actor, true),
      ),
    );
    // Set A wire/check: staff match received funds to a subscription by its reference code.
    router.post(
      '/reconciliations',
      may('reconcile'),
      keyRequired(),
      validate(
        {
          body: ReconcileBody,
          response: View,
          summary: 'Reconcile wire or check funds by reference code (Set A, staff)',
        },
        async (ctx, input) => {
          const reconciled = await staffDecision(
            ctx,
            'reconcile',
            { type: 'reference_code', id: input.body.referenceCode },
            async (seen) => {
              const record = await reads.byReferenceCode(input.body.referenceCode, ctx.state.principal);
              seen(record);
              return workflows.command(record.id, m.reconcile, {
                amount: input.body.amount,
                actorId: ctx.state.principal.userId,
              });
            },
          );
          ok(ctx, reconciled);
        },
      ),
    );
    // Read-only: staff find what a payment's reference names before (or instead of) reconciling it.
    router.get(
      '/subscriptions/by-reference/:reference_code',
      may('reconcile'),
      validate(
        {
          params: ReferenceCodeParams,
          response: View,
          summary: 'Look a subscription up by its reference code, without reconciling (Set A, staff)',
        },
        async (ctx, input) => {
          ok(
            ctx,
            toSubscriptionView((await reads.byReferenceCode(input.params.reference_code, ctx.state.principal)).state),
          );
        },
      ),
    );
  }
}
