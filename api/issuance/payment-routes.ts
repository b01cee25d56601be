import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { BehaviourSet } from '../../lib/behaviour-set';
import * as m from '../../domain/subscription-messages';
import type { SubscriptionAction } from '../../domain/policy';
import { validate, type Ctx } from '../middleware/validate';
import { ok } from '../respond';
import { PaymentSessionSchema, SubscriptionViewSchema as View } from '../../domain/subscription-view-schema';
import type { SubscriptionClient } from './subscription-client';
import type { subscriptionReads } from './subscription-reads';
import { CheckoutSessionBody, SetupSessionBody, SubmitForReviewBody, SubscriptionParams } from './schema';

interface Deps {
  may: (action: SubscriptionAction) => Middleware;
  workflows: SubscriptionClient;
  reads: ReturnType<typeof subscriptionReads>;
}

/** The investor's payment steps (spec §4.1): Set A links a method first, Set B pays at checkout. */
export function paymentRoutes(set: BehaviourSet, router: Router, { may, workflows, reads }: Deps): void {
  const mine = (ctx: Ctx, id: string, action: SubscriptionAction) => reads.authorized(id, ctx.state.principal, action);

  if (set === 'A') {
    router.post(
      '/subscriptions/:subscription_id/create-setup-session',
      may('create_setup_session'),
      validate(
        {
          params: SubscriptionParams,
          body: SetupSessionBody,
          response: PaymentSessionSchema,
          summary: 'Open a payment-method setup session (Set A)',
        },
        async (ctx, input) => {
          const record = await mine(ctx, input.params.subscription_id, 'create_setup_session');
          ok(ctx, await workflows.command(record.id, m.createSetupSession, input.body));
        },
      ),
    );
    router.post(
      '/subscriptions/:subscription_id/finalize-setup',
      may('finalize_setup'),
      validate(
        { params: SubscriptionParams, response: View, summary: 'Link the method the setup session collected (Set A)' },
        async (ctx, input) => {
          const record = await mine(ctx, input.params.subscription_id, 'finalize_setup');
          ok(ctx, await workflows.command(record.id, m.finalizeSetup));
        },
      ),
    );
    router.post(
      '/subscriptions/:subscription_id/submit-for-review',
      may('submit_for_review'),
      validate(
        {
          params: SubscriptionParams,
          body: SubmitForReviewBody,
          response: View,
          summary: 'Submit for compliance review (Set A)',
        },
        async (ctx, input) => {
          const record = await mine(ctx, input.params.subscription_id, 'submit_for_review');
          ok(ctx, await workflows.command(record.id, m.submitForReview, input.body));
        },
      ),
    );
    return;
  }

  router.post(
    '/subscriptions/:subscription_id/create-checkout-session',
    may('create_checkout_session'),
    validate(
      {
        params: SubscriptionParams,
        body: CheckoutSessionBody,
        response: PaymentSessionSchema,
        summary: 'Open a hosted checkout session (Set B)',
      },
      async (ctx, input) => {
        const record = await mine(ctx, input.params.subscription_id, 'create_checkout_session');
        ok(ctx, await workflows.command(record.id, m.createCheckoutSession, input.body));
      },
    ),
  );
}
