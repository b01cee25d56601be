import Router from '@koa/router';
import { z } from 'zod';
import { conflict, notFound } from '../../lib/errors';
import { formatAmount, isDecimalAmount, toMinor } from '../../lib/money';
import type { SandboxCollection } from '../../db/entities/payment-sandbox';
import type { SandboxProcessor } from '../../payments';
import type { ApiDeps } from '../deps';
import { subscriptionReads } from '../issuance/subscription-reads';
import { auth } from '../middleware/auth';
import { authorizeInOrganisation, organisationRoles, rolesFor } from '../../domain/policy';
import { validate, type Ctx } from '../middleware/validate';
import { ok } from '../respond';
import { shownText } from '../../lib/shown-text';

const CollectionParams = z.object({ collection_id: z.uuid() });
/** A paid checkout session's id or a settled collection's id. */
const ReferenceParams = z.object({ reference: z.uuid() });
const CollectionsQuery = z.strictObject({ subscription_id: z.uuid() });
const FailBody = z.strictObject({ reason: shownText(200).default('insufficient_funds') });

const CollectionView = z
  .object({
    id: z.uuid(),
    subscription_id: z.uuid(),
    amount: z.string(),
    currency: z.string(),
    status: z.string(),
    created_at: z.iso.datetime({ offset: true }),
  })
  .meta({ id: 'SandboxCollection' });
const ReversalView = z.object({
  reference: z.uuid(),
  status: z.enum(['refunded', 'disputed', 'partially_refunded', 'dispute_won', 'dispute_lost']),
});
/** A processor-side refund, as from the processor's own dashboard: part of the payment, or what is left. */
const OperatorRefundBody = z.strictObject({
  amount: z.string().refine(isDecimalAmount, "amount must be a decimal string in the payment's currency").optional(),
});
const RedeliveredView = z.object({ redelivered: z.number().int() });

const view = (c: SandboxCollection) => ({
  id: c.id,
  subscription_id: c.subscriptionId,
  amount: formatAmount(BigInt(c.amountMinor), c.currency),
  currency: c.currency,
  status: c.status,
  created_at: c.createdAt.toISOString(),
});

/**
 * The sandbox's operator console, the part of a processor's dashboard tests and demos need:
 * settle or fail a Set A collection (when auto-settle is off or slow), refund or dispute a payment,
 * resend notifications not yet delivered. Staff only.
 */
export function sandboxOperatorRouter(deps: ApiDeps, sandbox: SandboxProcessor): Router {
  const router = new Router({ prefix: '/payments/sandbox/operator' });
  const staff = auth(deps.tokens, ...rolesFor('operate_payments'));
  const { ledger } = sandbox;
  const reads = subscriptionReads(deps.orm);
  // Staff act only on payments of their own organisation's subscriptions.
  const own = async (ctx: Ctx, reference: string) => {
    const subscriptionId = await ledger.subscriptionOf(reference);
    if (!subscriptionId) throw notFound('Payment');
    await reads.authorized(subscriptionId, ctx.state.principal, 'operate_payments');
  };
  const done = (changed: boolean, what: string) => {
    if (!changed) throw conflict('SANDBOX_STATE', `The ${what} is not in a state that allows this`);
  };

  router.get(
    '/collections',
    staff,
    validate(
      {
        query: CollectionsQuery,
        response: z.array(CollectionView),
        summary: "List a subscription's sandbox collections (staff)",
      },
      async (ctx, input) => {
        await reads.authorized(input.query.subscription_id, ctx.state.principal, 'operate_payments');
        ok(ctx, (await ledger.collectionsOf(input.query.subscription_id)).map(view));
      },
    ),
  );
  router.post(
    '/collections/:collection_id/settle',
    staff,
    validate(
      { params: CollectionParams, response: CollectionView, summary: 'Settle a sandbox collection now (staff)' },
      async (ctx, input) => {
        await own(ctx, input.params.collection_id);
        done(await ledger.settleCollection(input.params.collection_id), 'collection');
        ok(ctx, view((await ledger.collection(input.params.collection_id))!));
      },
    ),
  );
  router.post(
    '/collections/:collection_id/fail',
    staff,
    validate(
      {
        params: CollectionParams,
        body: FailBody,
        response: CollectionView,
        summary: 'Fail a sandbox collection (staff)',
      },
      async (ctx, input) => {
        await own(ctx, input.params.collection_id);
        done(await ledger.failCollection(input.params.collection_id, input.body.reason), 'collection');
        ok(ctx, view((await ledger.collection(input.params.collection_id))!));
      },
    ),
  );
  router.post(
    '/payments/:reference/refund',
    staff,
    validate(
      {
        params: ReferenceParams,
        body: OperatorRefundBody,
        response: ReversalView,
        summary: 'Refund a sandbox payment, or part of it, as its processor would (staff)',
      },
      async (ctx, input) => {
        await own(ctx, input.params.reference);
        const paid =
          (await ledger.session(input.params.reference)) ?? (await ledger.collection(input.params.reference));
        const amount = input.body.amount;
        const minor = amount === undefined || !paid ? null : toMinor(amount, paid.currency);
        if (amount !== undefined && minor === null) done(false, 'payment');
        const refunded = await ledger.refund(input.params.reference, minor, { fromDisputed: true });
        done(refunded !== null, 'payment');
        const whole = paid?.amountMinor !== null && BigInt(paid!.amountMinor!) === refunded!.refundedMinor;
        ok(ctx, { reference: input.params.reference, status: whole ? 'refunded' : 'partially_refunded' });
      },
    ),
  );
  router.post(
    '/payments/:reference/dispute',
    staff,
    validate(
      { params: ReferenceParams, response: ReversalView, summary: 'Dispute a sandbox payment (staff)' },
      async (ctx, input) => {
        await own(ctx, input.params.reference);
        done(await ledger.reverse(input.params.reference, 'disputed'), 'payment');
        ok(ctx, { reference: input.params.reference, status: 'disputed' });
      },
    ),
  );
  // A dispute closes as the card network decides (docs/decisions/0285-dispute-outcomes.md).
  for (const outcome of ['won', 'lost'] as const) {
    router.post(
      `/payments/:reference/dispute-${outcome}`,
      staff,
      validate(
        {
          params: ReferenceParams,
          response: ReversalView,
          summary: `Close a sandbox payment's dispute as ${outcome} (staff)`,
        },
        async (ctx, input) => {
          await own(ctx, input.params.reference);
          done(await ledger.closeDispute(input.params.reference, outcome), 'payment');
          ok(ctx, { reference: input.params.reference, status: `dispute_${outcome}` as const });
        },
      ),
    );
  }
  router.post(
    '/notifications/redeliver',
    auth(deps.tokens, ...organisationRoles('redeliver_payment_notifications')),
    validate(
      {
        response: RedeliveredView,
        summary: "Resend the sandbox notifications not yet delivered about the organisation's subscriptions (staff)",
      },
      async (ctx) => {
        const scope = authorizeInOrganisation(ctx.state.principal, 'redeliver_payment_notifications');
        ok(ctx, { redelivered: await sandbox.notifier.redeliver(scope) });
      },
    ),
  );
  return router;
}
