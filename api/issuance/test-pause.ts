import type { Config } from '../../lib/runtime/config';
import { logger } from '../../lib/runtime/logger';

/**
 * A fault test's pause point (test/faults/stranded-hold.test.ts): with TEST_PAUSE_AFTER_CAPACITY_HOLD_MS
 * set, a create waits between its capacity hold and its workflow start, having said so in the log, so
 * the test can kill the process in that window. lib/runtime/config.ts refuses the setting unless
 * NODE_ENV is test; unset (always, outside a test) this returns at once.
 */
export async function pauseAfterCapacityHold(
  config: Pick<Config, 'NODE_ENV' | 'TEST_PAUSE_AFTER_CAPACITY_HOLD_MS'>,
  subscriptionId: string,
): Promise<void> {
  const ms = config.TEST_PAUSE_AFTER_CAPACITY_HOLD_MS;
  if (ms === undefined || config.NODE_ENV !== 'test') return;
  logger.warn({ subscriptionId, ms }, 'paused after the capacity hold');
  await new Promise((resolve) => setTimeout(resolve, ms));
}
