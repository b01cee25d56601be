// Every workflow the worker runs. Workflow code is deterministic: no I/O, clock, random or env.
export { subscriptionWorkflow } from './subscription';
export { retrySchedulerWorkflow } from './retry-scheduler';
export { webhookDeliveryWorkflow } from './webhook-delivery';
export { webhookRecoveryWorkflow } from './webhook-recovery';
export { orderedDeliveryWorkflow } from './ordered-delivery';
export { retentionPruneWorkflow } from './retention-prune';
export { auditCheckpointWorkflow } from './audit-checkpoint';
export { commitmentSweepWorkflow } from './commitment-sweep';
