import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The patch ids this release takes that the previous release cannot replay (deploy/rollback-barrier, the release
 * note of docs/decisions/0387-versioning-behaviour-per-workflow.md rule 3): empty when it can be rolled back past.
 */
export function rollbackBarrier(): string[] {
  return readFileSync(join(__dirname, '..', '..', '..', 'deploy', 'rollback-barrier'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** Whether a replay failure is only the previous build meeting one of the barrier's patch markers. */
export function stoppedAtBarrier(failure: string, barrier: string[]): boolean {
  const marker = /Non-deprecated patch marker encountered for change ([\w-]+)/.exec(failure);
  return marker !== null && barrier.includes(marker[1]!);
}
