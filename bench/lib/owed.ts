import type { PhaseContext } from './phase-context';

/**
 * Fails the run unless exactly `owed` deliveries arrived for the endpoints of `orgIds`, each once,
 * waiting up to `waitS` (a scaled run 1 min or more). Each phase's organisations are its own, so a
 * straggler of an earlier phase never counts toward this one's.
 */
export async function receivedExactly(
  ctx: Pick<PhaseContext, 'sink' | 'seconds' | 'fail'>,
  phase: string,
  orgIds: readonly string[],
  owed: number,
  waitS = 600,
): Promise<void> {
  const got = await ctx.sink.waitForReceipts(orgIds, owed, Math.max(60, ctx.seconds(waitS)) * 1000);
  if (got.received !== owed || got.duplicates !== 0)
    ctx.fail(`${phase}: ${got.received} received, ${got.duplicates} duplicates, ${owed} owed`);
}
