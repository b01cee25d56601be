/** Ids of the bulk recovery workflow; the API imports this module, not the workflow code. */
export const recoveryWorkflowId = (recoveryId: string) => `webhook-recovery-${recoveryId}`;
