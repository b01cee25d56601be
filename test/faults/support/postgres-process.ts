import { spawn } from 'node:child_process';
import { Client as PgClient } from 'pg';
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

/** The services' login role in the group the migrations grant to, made once on this server by its superuser. */
export async function serviceRoleOn(ownerUrl: string): Promise<string> {
  const client = new PgClient({ connectionString: ownerUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const has = async (role: string) =>
      ((await client.query('select 1 from pg_roles where rolname = $1', [role])).rowCount ?? 0) > 0;
    if (!(await has('tranche_service'))) await client.query('create role tranche_service nologin');
    if (!(await has('tranche_app')))
      await client.query("create role tranche_app login password 'tranche-app' in role tranche_service");
  } finally {
    await client.end();
  }
  const url = new URL(ownerUrl);
  url.username = 'tranche_app';
  url.password = 'tranche-app';
  return url.toString();
}
