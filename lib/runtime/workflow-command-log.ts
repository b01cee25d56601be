import type { WorkflowClientInterceptor } from '@temporalio/client';
import { logger } from './logger';
import { currentRequestId } from './request-scope';

/**
 * Logs each command the API sends a workflow (start, update, signal) with the request id beside
 * the workflow id, so one grep follows a request into the workflow's history. Only names and ids
 * are logged, never arguments: those can carry signatures and personal data.
 */
export function workflowCommandLog(): WorkflowClientInterceptor {
  const log = (command: string, workflowId: string | undefined) => {
    const requestId = currentRequestId();
    if (requestId) logger.info({ requestId, workflowId, command }, 'workflow command');
  };
  return {
    async startWithDetails(input, next) {
      log(`start:${input.workflowType}`, input.options.workflowId);
      return next(input);
    },
    async startUpdate(input, next) {
      log(`update:${input.updateName}`, input.workflowExecution.workflowId);
      return next(input);
    },
    async startUpdateWithStart(input, next) {
      log(`update-with-start:${input.updateName}`, input.workflowStartOptions.workflowId);
      return next(input);
    },
    async signal(input, next) {
      log(`signal:${input.signalName}`, input.workflowExecution.workflowId);
      return next(input);
    },
    async signalWithStart(input, next) {
      log(`signal-with-start:${input.signalName}`, input.options.workflowId);
      return next(input);
    },
  };
}
