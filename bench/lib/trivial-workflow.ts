// The engine's ceiling: a workflow with one local activity, nothing else. Bundled by bench/webhooks.ts only.
import { proxyLocalActivities } from '@temporalio/workflow';

const { noop } = proxyLocalActivities<{ noop(): Promise<number> }>({ startToCloseTimeout: '10s' });

export async function trivialWorkflow(): Promise<number> {
  return noop();
}
