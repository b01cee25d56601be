/**
 * One long-running workflow per subscription (spec §3), read as its three steps; each is a method
 * of workflows/subscription-run.ts.
 */
import type { SubscriptionView } from '../domain/subscription-view';
import type { SubscriptionWorkflowInput } from '../domain/subscription-messages';
import { SubscriptionRun } from './subscription-run';

export async function subscriptionWorkflow(input: SubscriptionWorkflowInput): Promise<SubscriptionView> {
  const run = new SubscriptionRun(input);
  run.acceptCommands(); // §4.1: investor and staff commands as updates, notifications as a signal
  await run.announceCreation(); // the first projection and subscription.created
  return run.untilSettled(); // collection, closed sessions, notifications, until the linger ends
}
