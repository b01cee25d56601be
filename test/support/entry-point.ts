import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { stopProcess } from '../../scripts/lib/temporal-dev-server';

const root = join(__dirname, '..', '..');

/** A service entry point (`server/main.ts`, `worker/main.ts`) run as its own process, as a deployment runs it. */
export interface EntryPoint {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output: () => string;
  /** Its exit code, once it exits. */
  exited: Promise<number | null>;
  stop: () => Promise<void>;
}

export function spawnEntryPoint(file: string, env: Record<string, string>): EntryPoint {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, file)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited, stop: () => stopProcess(child) };
}
