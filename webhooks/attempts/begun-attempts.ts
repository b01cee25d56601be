import type { AttemptInput, AttemptResult } from '../../domain/webhook-messages';
import { logger } from '../../lib/runtime/logger';

/** How long a begun attempt's result waits for its run's local activity, which comes within milliseconds. */
const KEPT_MS = 30_000;

const keyOf = (input: Pick<AttemptInput, 'owner' | 'deliveryId' | 'number'>) =>
  `${input.owner}\u0000${input.deliveryId}\u0000${input.number}`;

/**
 * One call per attempt in this process (docs/decisions/0358-first-attempt-begun-at-the-start.md). The
 * start path begins attempt 1 of a delivery workflow whose first task came back to this process in
 * the start's answer, with that run as its owner; the run's local activity then joins that call
 * instead of making its own. The same owner never claims the same number twice at once here, so the
 * database's claim (recorded before the POST) stays the one guard against sending twice: a call
 * made after a joined one has ended finds its row recorded and sends nothing.
 */
export function begunAttempts(run: (input: AttemptInput) => Promise<AttemptResult>) {
  const calls = new Map<string, { result: Promise<AttemptResult>; taken: boolean; settled: boolean }>();

  const call = (input: AttemptInput, taken: boolean) => {
    const key = keyOf(input);
    const entry = { result: run(input), taken, settled: false };
    calls.set(key, entry);
    const forget = () => {
      if (calls.get(key) === entry) calls.delete(key);
    };
    entry.result.then(
      () => {
        entry.settled = true;
        // A begun result waits for its run's activity; one already taken goes.
        if (entry.taken) forget();
        else setTimeout(forget, KEPT_MS).unref();
      },
      (err: unknown) => {
        entry.settled = true;
        forget();
        // The run's activity, which takes the failure or comes after it, tries again as it would have.
        if (!entry.taken)
          logger.warn({ err, deliveryId: input.deliveryId }, 'begun attempt failed; its run tries again');
      },
    );
    return entry.result;
  };

  return {
    /** The start path: begins this attempt unless this process has it in hand already; answers whether it did. */
    begin(input: AttemptInput): boolean {
      if (calls.has(keyOf(input))) return false;
      void call(input, false);
      return true;
    },
    /** The run's local activity: joins the call begun for this attempt here, else makes it. */
    attempt(input: AttemptInput): Promise<AttemptResult> {
      const key = keyOf(input);
      const begun = calls.get(key);
      if (!begun) return call(input, true);
      begun.taken = true;
      if (begun.settled) calls.delete(key);
      return begun.result;
    },
    /** Waits for every call still open here, begun or joined, so a stopping worker records its POSTs. */
    async idle(): Promise<void> {
      await Promise.allSettled([...calls.values()].filter((c) => !c.settled).map((c) => c.result));
    },
  };
}
