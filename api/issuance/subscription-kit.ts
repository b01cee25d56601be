import type { UpdateDefinition } from '@temporalio/common';
import type { SubscriptionView } from '../../domain/subscription-view';
import { rolesFor, type SubscriptionAction } from '../../domain/policy';
import type { ApiDeps } from '../deps';
import { auth } from '../middleware/auth';
import type { Ctx } from '../middleware/validate';
import { ok } from '../respond';
import { investorSealer, personalSealer } from '../personal/sealing';
import { kycGate } from './kyc-gate';
import { staffDecisions, type SeenRecord } from './staff-decisions';
import { subscriptionClient } from './subscription-client';
import { projectionOf, subscriptionReads } from './subscription-reads';

/**
 * What every subscription route is built from (subscriptions-router.ts, staff-routes.ts,
 * payment-routes.ts): the reads, the workflows' client, the KYC gate, the policy's guards, staff
 * decisions' audit and the sealer of an investor's own words.
 */
export function subscriptionKit(deps: ApiDeps) {
  const set = deps.config.BEHAVIOUR_SET;
  const reads = subscriptionReads(deps.orm);
  const workflows = subscriptionClient(deps.temporal, deps.config, projectionOf(deps.orm));
  const gate = kycGate(set, deps.kyc);
  /** Authentication plus the roles the policy needs before anything is loaded (and documented). */
  const may = (action: SubscriptionAction) => auth(deps.tokens, ...rolesFor(action));

  const staffDecision = staffDecisions(deps.orm);
  /** The investor's own words and traces, sealed under their key before the workflow sees them (decision 0313). */
  const seal = personalSealer(deps);
  /** One investor's key as a sealer and a keyed hash (the create: its self-reported accreditation and request hash). */
  const investorKey = investorSealer(deps);

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

  return { deps, set, reads, workflows, gate, may, staffDecision, seal, investorKey, command };
}

export type SubscriptionKit = ReturnType<typeof subscriptionKit>;
