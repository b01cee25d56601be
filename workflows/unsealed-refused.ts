/**
 * What a workflow does with a message whose payload arrived unsealed (docs/decisions/0379-unsealed-payloads-refused.md):
 * the payload codec has already put a marker in its place (lib/unsealed-payload.ts), which no converter reads.
 * Left to the SDK, a signal's unreadable input would fail every workflow task from then on, and the
 * subscription would be stuck behind it; so the signal is dropped before any handler sees it, the same on
 * every replay. An update's unreadable input is refused by the SDK itself before it is accepted (nothing
 * enters the history), a query's fails that query. A workflow started with unsealed input fails at once,
 * not its first task over and over. Bundled with every workflow (worker/bundle-workflows.ts).
 */
import {
  ApplicationFailure,
  log,
  type ActivateInput,
  type Next,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
  type WorkflowInternalsInterceptor,
} from '@temporalio/workflow';
import { anyRefused, unsealedRefused } from '../lib/unsealed-payload';

/** The header a start whose input was refused carries from the activation to `execute`. */
const REFUSED_INPUT_HEADER = 'tranche-unsealed-input-refused';

class DropUnsealedSignals implements WorkflowInternalsInterceptor {
  activate(input: ActivateInput, next: Next<WorkflowInternalsInterceptor, 'activate'>): void {
    const jobs = input.activation.jobs ?? [];
    if (!jobs.some((job) => anyRefused(job.signalWorkflow?.input) || anyRefused(job.initializeWorkflow?.arguments)))
      return next(input);
    const kept = [];
    for (const job of jobs) {
      if (anyRefused(job.signalWorkflow?.input)) {
        log.warn('signal dropped: its payload arrived unsealed', { signalName: job.signalWorkflow!.signalName });
        continue;
      }
      const start = job.initializeWorkflow;
      if (start && anyRefused(start.arguments)) {
        start.arguments = [];
        start.headers = { ...start.headers, [REFUSED_INPUT_HEADER]: unsealedRefused() };
      }
      kept.push(job);
    }
    return next({ ...input, activation: { ...input.activation, jobs: kept } });
  }
}

class FailUnsealedStart implements WorkflowInboundCallsInterceptor {
  async execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    if (input.headers[REFUSED_INPUT_HEADER])
      throw ApplicationFailure.nonRetryable(
        'the workflow was started with an unsealed input',
        'UnsealedPayloadRefused',
      );
    return await next(input);
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  internals: [new DropUnsealedSignals()],
  inbound: [new FailUnsealedStart()],
});
