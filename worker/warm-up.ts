import type { Worker } from '@temporalio/worker';
import { logger } from '../lib/runtime/logger';
import { recordWarmUp } from '../lib/runtime/metrics';
import type { RunningEngine } from '../webhooks';

/** How often the warm-up looks whether the Temporal worker has begun polling. */
const STATE_POLL_MS = 20;

/**
 * A worker's start-up warm-up (docs/decisions/0302-warm-before-ready.md): once the Temporal worker
 * polls (its workflow bundle loaded, its connection open), the delivery engine pays what its first
 * deliveries would otherwise pay, then takes the warm lock every API's /ready waits for. Each part
 * is logged and set in `tranche_warm_up_seconds`; a failed part is tried again, 1 s to 10 s apart,
 * while the worker runs. Answers the parts, in the order they ran.
 */
export async function warmWorker(worker: Worker, engine: RunningEngine): Promise<{ part: string; ms: number }[]> {
  const t0 = performance.now();
  while (worker.getState() === 'INITIALIZED') await new Promise((r) => setTimeout(r, STATE_POLL_MS));
  const parts = [{ part: 'temporal_worker', ms: Math.round((performance.now() - t0) * 10) / 10 }];
  // A part that fails (the database restarting) is tried again: an API is not ready until some worker is warm.
  for (let backoff = 1000; ; backoff = Math.min(backoff * 2, 10_000)) {
    try {
      parts.push(...(await engine.warmUp()));
      await engine.markWarm();
      break;
    } catch (err) {
      if (worker.getState() !== 'RUNNING') throw err;
      logger.warn({ err }, 'worker warm-up failed; trying again');
      await new Promise((r) => setTimeout(r, backoff));
    }
  }
  for (const { part, ms } of parts) recordWarmUp(part, ms / 1000);
  logger.info({ parts }, 'worker warm');
  return parts;
}
