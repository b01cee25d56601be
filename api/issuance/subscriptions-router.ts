import Router from '@koa/router';
import { conflict, validationFailed } from '../../lib/errors';
import { currencyPlaces, toMinor } from '../../lib/money';
import { toSubscriptionView, type SubscriptionView } from '../../domain/subscription-view';
import type { UpdateDefinition } from '@temporalio/common';
import * as m from '../../domain/subscription-messages';
import type { ApiDeps } from '../deps';
import { auth } from '../middleware/auth';
import { authorize, authorizeApproval, rolesFor, type SubscriptionAction } from '../../domain/policy';
import { validate, type Ctx } from '../middleware/validate';
import { ok } from '../respond';
import { SubscriptionViewSchema as View } from '../../domain/subscription-view-schema';
import { newSubscription } from './create-subscription';
import { personalSealer } from '../personal/sealing';
import { reserveCapacity } from './capacity-rules';
import { releaseCommitment } from '../../db/offering-capacity';
import { kycGate } from './kyc-gate';
import { paymentRoutes } from './payment-routes';
import { staffDecisions, type SeenRecord } from './staff-decisions';
import { subscriptionClient } from './subscription-client';
import { projectionOf, subscriptionReads } from './subscription-reads';
import {
  CreateSubscriptionBody,
  IdempotencyKey,
  ListSubscriptionsQuery,
  OfferingParams,
  ProvideInfoBody,
  ReasonBody,
  ReconcileBody,
  RefundBody,
  SignAgreementBody,
  ReferenceCodeParams,
  SubscriptionList,
  SubscriptionParams,
} from './schema';

/** spec §4.1, plus the staff operations the spec leaves unshown (docs/decisions/0009-staff-operations.md). */
export function subscriptionsRouter(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/issuance' });
  const set = deps.config.BEHAVIOUR_SET;
  const reads = subscriptionReads(deps.orm);
  const workflows = subscriptionClient(deps.temporal, deps.config, projectionOf(deps.orm));
  const gate = kycGate(set, deps.kyc);
  /** Authentication plus the roles the policy needs before anything is loaded (and documented). */
  const may = (action: SubscriptionAction) => auth(deps.tokens, ...rolesFor(action));

  const staffDecision = staffDecisions(deps.orm);
  /** The investor's own words and traces, sealed under their key before the workflow sees them (decision 0313). */
  const seal = personalSealer(deps);

  /** Runs a command on a subscription the policy allows, and answers with the updated view. */
  function command<A extends unknown[]>(
    action: SubscriptionAction,
    update: UpdateDefinition<SubscriptionView, A>,
    args: (ctx: Ctx, body: never) => A,
    audited = false,
  ) {
    return async (ctx: Ctx, input: { params: { subscription_id: string }; body?: unknown }) => {
      const run = async (seen: SeenRecord) => {
        const record = await reads.authorized(input.params.subscription_id, ctx.state.principal, action);
        seen(record);
        return workflows.command(record.id, update, ...args(ctx, input.body as never));
      };
      ok(
        ctx,
        audited ? await staffDecision(ctx, action, input.params.subscription_id, run) : await run(() => undefined),
      );
    };
  }

  router.post(
    '/offerings/:offering_id/subscriptions',
    may('create'),
    validate(
      {
        params: OfferingParams,
        body: CreateSubscriptionBody,
        response: View,
        status: 201,
        summary: 'Create a subscription (spec §4.1)',
      },
      async (ctx, input) => {
        const p = ctx.state.principal;
        authorize(p, 'create');
        const key = ctx.get('idempotency-key') || undefined;
        if (key !== undefined) IdempotencyKey.parse(key);
        const start = await newSubscription(deps.orm, set, p, input.params.offering_id, input.body, key);
        await gate(p, p.userId, start.orgId);
        // A key names one subscription for good: once it is recorded, the answer comes from the
        // record, even after Temporal's retention removed its workflow (a start would run it again).
        const earlier = key === undefined ? null : await reads.ifRecorded(start.id, p, 'read');
        if (!earlier) {
          // Held before the workflow starts, so the refusal is the create's own answer
          // (docs/decisions/0278-offering-capacity-reservations.md).
          await reserveCapacity(
            deps.orm,
            {
              subscriptionId: start.id,
              offeringId: start.offeringId,
              securityClassId: start.securityClassId,
              amount: start.totalAmount,
            },
            start.currency,
          );
        }
        const created = earlier ? null : await workflows.create(start).catch(releaseIfNeverStarted(start.id));
        if (created) return ok(ctx, created);
        // The workflow behind this key already ended: answer from the projection.
        const record = earlier ?? (await reads.authorized(start.id, p, 'read'));
        if (record.requestHash !== start.requestHash)
          throw conflict('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body');
        ok(ctx, toSubscriptionView(record.state));
      },
    ),
  );

  /**
   * A create that failed before its workflow existed gives its commitment back; one whose outcome
   * is unknown keeps it (a retry with the same key finds it), erring towards a stranded commitment
   * rather than an oversold offering.
   */
  const releaseIfNeverStarted =
    (subscriptionId: string) =>
    async (err: unknown): Promise<never> => {
      if (await workflows.neverStarted(subscriptionId)) {
        await releaseCommitment(deps.orm.em.getConnection().getKnex(), subscriptionId);
      }
      throw err;
    };

  router.get(
    '/subscriptions',
    may('read'),
    validate(
      {
        query: ListSubscriptionsQuery,
        response: SubscriptionList,
        summary: "List subscriptions: an investor's own, staff their organisation's",
      },
      async (ctx, input) => {
        ok(ctx, await reads.list(ctx.state.principal, input.query));
      },
    ),
  );

  router.get(
    '/subscriptions/:subscription_id',
    may('read'),
    validate({ params: SubscriptionParams, response: View, summary: 'Get one subscription' }, async (ctx, input) => {
      ok(
        ctx,
        toSubscriptionView((await reads.authorized(input.params.subscription_id, ctx.state.principal, 'read')).state),
      );
    }),
  );

  router.delete(
    '/subscriptions/:subscription_id',
    may('cancel'),
    validate(
      {
        params: SubscriptionParams,
        status: 204,
        summary: 'Cancel a subscription (draft, pending_signature or pending_payment)',
      },
      async (ctx, input) => {
        const record = await reads.authorized(input.params.subscription_id, ctx.state.principal, 'cancel');
        await workflows.command(record.id, m.cancel);
        ctx.status = 204;
      },
    ),
  );

  router.post(
    '/subscriptions/:subscription_id/request-signature',
    may('request_signature'),
    validate(
      { params: SubscriptionParams, response: View, summary: 'Present the agreement: draft to pending_signature' },
      command('request_signature', m.requestSignature, () => []),
    ),
  );

  router.post(
    '/subscriptions/:subscription_id/sign-agreement',
    may('sign'),
    validate(
      {
        params: SubscriptionParams,
        body: SignAgreementBody,
        response: View,
        summary: 'Sign the subscription agreement',
      },
      async (ctx, input) => {
        const record = await reads.authorized(input.params.subscription_id, ctx.state.principal, 'sign');
        await gate(ctx.state.principal, record.investorId, record.orgId);
        const { signedAt, ipAddress } = input.body;
        const owner = { orgId: record.orgId, userId: record.investorId };
        const [signature] = await seal(owner, [input.body.signature] as const);
        const [sealedIp] = ipAddress === undefined ? [null] : await seal(owner, [ipAddress] as const);
        ok(ctx, await workflows.command(record.id, m.signAgreement, { signature, signedAt, ipAddress: sealedIp }));
      },
    ),
  );

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
  router.post(
    '/subscriptions/:subscription_id/provide-info',
    may('provide_info'),
    validate(
      {
        params: SubscriptionParams,
        body: ProvideInfoBody,
        response: View,
        summary: "Answer staff's open information request (the investor who owns it)",
      },
      async (ctx, input) => {
        const record = await reads.authorized(input.params.subscription_id, ctx.state.principal, 'provide_info');
        const owner = { orgId: record.orgId, userId: record.investorId };
        const [message, ...documentReferences] = await seal(owner, [
          input.body.message,
          ...input.body.documentReferences,
        ]);
        ok(
          ctx,
          await workflows.command(record.id, m.provideInfo, {
            message: message!,
            documentReferences,
            actorId: ctx.state.principal.userId,
          }),
        );
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

  // Money back through the deployment's processor (docs/decisions/0284-refunds.md); both sets.
  router.post(
    '/subscriptions/:subscription_id/refund',
    may('refund'),
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
            });
          },
          (view) => ({
            status: view.status,
            payment_status: view.payment_status,
            amount_received: view.amount_received ?? null,
            amount_refunded: view.amount_refunded ?? null,
            requested: amount ?? 'all',
            reason: reason.slice(0, 200),
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
      validate(
        { params: SubscriptionParams, response: View, summary: 'Collect a failed payment again (Set A, staff)' },
        command('retry_collection', m.retryCollection, actor, true),
      ),
    );
    // Set A wire/check: staff match received funds to a subscription by its reference code.
    router.post(
      '/reconciliations',
      may('reconcile'),
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

  paymentRoutes(set, router, { may, workflows, reads });
  return router;
}
