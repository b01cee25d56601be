import type { Client } from '@temporalio/client';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Delivery workflows waiting on their retry timers: publishes `count` events to an endpoint that
 * answers 500 and waits until that many delivery workflows are running (each holds a durable timer
 * in Temporal; the worker caches at most WORKER_MAX_CACHED_WORKFLOWS of them).
 */
export async function waitingRetries(opts: {
  temporal: Client;
  count: number;
  publishBatch: (events: number) => Promise<void>;
  timeoutMs: number;
}): Promise<{ waiting: number; seconds: number }> {
  const t0 = Date.now();
  for (let left = opts.count; left > 0; left -= 500) await opts.publishBatch(Math.min(500, left));
  const running = async () =>
    (await opts.temporal.workflow.count(`WorkflowType = "webhookDeliveryWorkflow" AND ExecutionStatus = "Running"`))
      .count;
  let waiting = await running();
  while (waiting < opts.count && Date.now() - t0 < opts.timeoutMs) {
    await sleep(2000);
    waiting = await running();
  }
  return { waiting, seconds: Math.round((Date.now() - t0) / 1000) };
}
