import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { BehaviourSet } from '../../domain/behaviour-set';
import * as m from '../../workflows/subscription-messages';
import { validate, type Ctx } from '../middleware/validate';
import type { SubscriptionClient } from './subscription-client';
import type { subscriptionReads } from './subscription-reads';
import { CheckoutSessionBody, SetupSessionBody, SubmitForReviewBody, SubscriptionParams } from './schema';

interface Deps {
  investor: Middleware;
  workflows: SubscriptionClient;
  reads: ReturnType<typeof subscriptionReads>;
}

const ok = (ctx: Ctx, data: unknown) => {
  ctx.body = { success: true, data };
};

/** The investor's payment steps (spec §4.1): Set A links a method first, Set B pays at checkout. */
export function paymentRoutes(set: BehaviourSet, router: Router, { investor, workflows, reads }: Deps): void {
  const mine = (ctx: Ctx, id: string) => reads.visible(id, ctx.state.principal);

  if (set === 'A') {
    router.post('/subscriptions/:subscription_id/create-setup-session', investor, validate({ params: SubscriptionParams, body: SetupSessionBody }, async (ctx, input) => {
      const record = await mine(ctx, input.params.subscription_id);
      ok(ctx, await workflows.command(record.id, m.createSetupSession, input.body));
    }));
    router.post('/subscriptions/:subscription_id/finalize-setup', investor, validate({ params: SubscriptionParams }, async (ctx, input) => {
      const record = await mine(ctx, input.params.subscription_id);
      ok(ctx, await workflows.command(record.id, m.finalizeSetup));
    }));
    router.post('/subscriptions/:subscription_id/submit-for-review', investor, validate({ params: SubscriptionParams, body: SubmitForReviewBody }, async (ctx, input) => {
      const record = await mine(ctx, input.params.subscription_id);
      ok(ctx, await workflows.command(record.id, m.submitForReview, input.body));
    }));
    return;
  }

  router.post('/subscriptions/:subscription_id/create-checkout-session', investor, validate({ params: SubscriptionParams, body: CheckoutSessionBody }, async (ctx, input) => {
    const record = await mine(ctx, input.params.subscription_id);
    ok(ctx, await workflows.command(record.id, m.createCheckoutSession, input.body));
  }));
}
