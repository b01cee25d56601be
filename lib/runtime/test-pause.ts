import { logger } from './logger';

/** The pause points a fault test may name in TEST_PAUSE_AT (lib/runtime/settings/service-settings.ts). */
export type PausePoint = 'refund-sent' | 'capacity-held';

/**
 * Stops here for good when the configuration names this point, which it can only under NODE_ENV=test
 * (lib/runtime/config.ts refuses it anywhere else): the test sees the line and kills the process.
 */
export async function pauseForTest(configured: PausePoint | undefined, point: PausePoint): Promise<void> {
  if (configured !== point) return;
  logger.warn({ pause: point }, 'test pause point reached: waiting to be killed');
  await new Promise<never>(() => undefined);
}
