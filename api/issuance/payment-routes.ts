import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { BehaviourSet } from '../../domain/behaviour-set';
import * as m from '../../workflows/subscription-messages';
import { validate, type Ctx } from '../middleware/validate';
import { ok } from '../respond';
import { PaymentSessionSchema, SubscriptionViewSchema as View } from '../../domain/subscription-view-schema';
import type { SubscriptionClient } from './subscription-client';
import type { subscriptionReads } from './subscription-reads';
import { CheckoutSessionBody, SetupSessionBody, SubmitForReviewBody, SubscriptionParams } from './schema';

interface Deps {
  investor: Middleware;
  workflows: SubscriptionClient;
  reads: ReturnType<typeof subscriptionReads>;
}

/** The investor's payment steps (spec §4.1): Set A links a method first, Set B pays at checkout. */
export function paymentRoutes(set: BehaviourSet, router: Router, { investor, workflows, reads }: Deps): void {
  const mine = (ctx: Ctx, id: string) => reads.visible(id, ctx.state.principal);

  if (set === 'A') {
    router.post('/subscriptions/:subscription_id/create-setup-session', investor, validate({ params: SubscriptionParams, body: SetupSessionBody, response: PaymentSessionSchema, summary: 'Open a payment-method setup session (Set A)' }, async (ctx, input) => {
      const record = await mine(ctx, input.params.subscription_id);
      ok(ctx, await workflows.command(record.id, m.createSetupSession, input.body));
    }));
    router.post('/subscriptions/:subscription_id/finalize-setup', investor, validate({ params: SubscriptionParams, response: View, summary: 'Link the method the setup session collected (Set A)' }, async (ctx, input) => {
      const record = await mine(ctx, input.params.subscription_id);
      ok(ctx, await workflows.command(record.id, m.finalizeSetup));
    }));
    router.post('/subscriptions/:subscription_id/submit-for-review', investor, validate({ params: SubscriptionParams, body: SubmitForReviewBody, response: View, summary: 'Submit for compliance review (Set A)' }, async (ctx, input) => {
      const record = await mine(ctx, input.params.subscription_id);
      ok(ctx, await workflows.command(record.id, m.submitForReview, input.body));
    }));
    return;
  }

  router.post('/subscriptions/:subscription_id/create-checkout-session', investor, validate({ params: SubscriptionParams, body: CheckoutSessionBody, response: PaymentSessionSchema, summary: 'Open a hosted checkout session (Set B)' }, async (ctx, input) => {
    const record = await mine(ctx, input.params.subscription_id);
    ok(ctx, await workflows.command(record.id, m.createCheckoutSession, input.body));
  }));
}
