import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { stopProcess } from '../../../scripts/lib/temporal-dev-server';

export interface PostgresProcess {
  /** URL of the `faults` database on it. */
  url: string;
  stop(): Promise<void>;
}

/** Starts postgres-server.ts on `dir` (created on first start, kept after) and waits until it serves. */
export async function spawnPostgres(dir: string, port: number): Promise<PostgresProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'postgres-server.ts'), dir, String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`postgres did not start within 60 s:\n${output}`)), 60_000);
    child.stdout!.on('data', (d) => {
      output += d;
      if (output.includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on('data', (d) => (output += d));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`postgres exited during start (code ${code}):\n${output}`));
    });
  });
  return { url: `postgres://postgres:tranche@127.0.0.1:${port}/faults`, stop: () => stopProcess(child, 30_000) };
}
