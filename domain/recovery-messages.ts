/** The bulk recovery workflow's id, name and shape; the API imports this module, not the workflow code. */
export const recoveryWorkflowId = (recoveryId: string) => `webhook-recovery-${recoveryId}`;
export const RECOVERY_WORKFLOW = 'webhookRecoveryWorkflow';
export type RecoveryWorkflow = (recoveryId: string) => Promise<'finished'>;
