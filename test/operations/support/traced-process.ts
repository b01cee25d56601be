import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** The checkout's root, where a traced process starts (its first import is the tracing start). */
export const root = join(__dirname, '..', '..', '..');

/**
 * Runs a script in a Node process of its own at the root, as the API and worker start, with none of
 * this process's OTEL_* variables and `env` on top; its standard output.
 */
export async function runScript(script: string, env: Record<string, string>): Promise<string> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: root,
    env: { ...clean, ...env },
  });
  return stdout;
}
