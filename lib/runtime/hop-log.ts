import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';

/** How often a hop log looks whether its `on` file is there. */
const LOOK_MS = 500;

/**
 * Per-hop timestamps of webhook deliveries, for the benchmark's breakdown of one delivery's
 * time (API handler, commit, NOTIFY, wake-up, claim, POST, record). On only when
 * WEBHOOK_HOP_LOG_DIR is set, and writing only while `<dir>/on` exists, so the benchmark times
 * one phase and no other. Each process appends JSON lines to `<dir>/<role>-<pid>.jsonl`; times are
 * wall-clock milliseconds with sub-millisecond precision, comparable between processes on one machine.
 */
export interface HopLog {
  /** Whether marks are written now (so a caller can skip taking timestamps). */
  readonly on: boolean;
  mark(line: Record<string, string | number>): void;
}

/** Wall-clock milliseconds, to a hundredth. */
export const hopNow = (): number => Math.round((performance.timeOrigin + performance.now()) * 100) / 100;

const logs = new Map<string, HopLog>();

/** This process's hop log for `role`, or undefined when WEBHOOK_HOP_LOG_DIR is unset. */
export function hopLogOf(dir: string | undefined, role: 'api' | 'worker'): HopLog | undefined {
  if (!dir) return undefined;
  const known = logs.get(role);
  if (known) return known;
  let on = existsSync(join(dir, 'on'));
  setInterval(() => (on = existsSync(join(dir, 'on'))), LOOK_MS).unref();
  let out: WriteStream | undefined;
  const log: HopLog = {
    get on() {
      return on;
    },
    mark(line) {
      if (!on) return;
      out ??= createWriteStream(join(dir, `${role}-${process.pid}.jsonl`), { flags: 'a' });
      out.write(`${JSON.stringify(line)}\n`);
    },
  };
  logs.set(role, log);
  return log;
}
