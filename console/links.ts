import type { Config } from '../lib/runtime/config';
import { subscriptionWorkflowId } from '../domain/subscription';
import { deliveryWorkflowId } from '../domain/webhook-messages';

/**
 * Every link from the console into the Temporal Web UI is built here, from the same workflow-id
 * functions the service starts workflows with, so a change of id scheme changes the links too.
 */
export function temporalLinks(config: Config) {
  const base = `${config.TEMPORAL_UI_URL.replace(/\/$/, '')}/namespaces/${encodeURIComponent(config.TEMPORAL_NAMESPACE)}/workflows`;
  const workflow = (id: string) => `${base}/${encodeURIComponent(id)}`;
  return {
    subscription: (subscriptionId: string) => workflow(subscriptionWorkflowId(subscriptionId)),
    delivery: (deliveryId: string) => workflow(deliveryWorkflowId(deliveryId)),
  };
}
export type TemporalLinks = ReturnType<typeof temporalLinks>;
