import { setTimeout as sleep } from 'node:timers/promises';
import { logger } from './logger';

/**
 * Something a service process needs before it can serve, as its start-up wait sees it
 * (docs/decisions/0338-dependencies-awaited-at-start.md).
 */
export interface Dependency<T> {
  /** What the log and the final error call it, with no secret in it: `Temporal at temporal:7233`. */
  name: string;
  /** One try; resolves once the dependency answers. */
  reach: () => Promise<T>;
  /** Whether a failed try means "not up yet", worth another, rather than a refusal such as a wrong password. */
  notUpYet: (err: unknown) => boolean;
}

const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 5_000;
const LOG_EVERY_MS = 10_000;

/**
 * Tries `dependency` until it answers, for up to `waitSeconds` (STARTUP_WAIT_SECONDS), so a process
 * started before its PostgreSQL or Temporal (a host's reboot, a compose file's first start) comes up
 * with them instead of exiting. A refusal fails at once; silence past the wait fails naming the
 * dependency, the setting and the last reason.
 */
export async function whenReachable<T>(dependency: Dependency<T>, waitSeconds: number): Promise<T> {
  const started = Date.now();
  const deadline = started + waitSeconds * 1000;
  let pause = FIRST_PAUSE_MS;
  let loggedAt = -Infinity;
  for (;;) {
    try {
      const answer = await dependency.reach();
      if (loggedAt > -Infinity) logger.info({ dependency: dependency.name }, 'dependency answered; starting');
      return answer;
    } catch (err) {
      if (!dependency.notUpYet(err)) throw err;
      const now = Date.now();
      if (now >= deadline) {
        throw new Error(
          `${dependency.name} did not answer within ${waitSeconds} s (STARTUP_WAIT_SECONDS): ${reasonOf(err)}`,
          { cause: err },
        );
      }
      if (now - loggedAt >= LOG_EVERY_MS) {
        loggedAt = now;
        logger.warn(
          { dependency: dependency.name, waited_s: Math.round((now - started) / 1000), reason: reasonOf(err) },
          `waiting for ${dependency.name}`,
        );
      }
      await sleep(Math.min(pause, deadline - now));
      pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
    }
  }
}

/** Error codes along an error's causes: a system call's (`ECONNREFUSED`), PostgreSQL's (`57P03`) or gRPC's (14). */
export function codesOf(err: unknown): Array<string | number> {
  const codes: Array<string | number> = [];
  for (let at = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; at && depth < 5; depth++) {
    if (typeof at.code === 'string' || typeof at.code === 'number') codes.push(at.code);
    at = at.cause as typeof at;
  }
  return codes;
}

function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message || codesOf(err).join(', ') || 'no reason given';
}
