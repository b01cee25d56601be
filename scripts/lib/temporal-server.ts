import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { ensureNamespace } from '../../lib/runtime/temporal';
import { stopProcess, type RunningTemporal } from './temporal-dev-server';

const run = promisify(execFile);

/** Where the production shape's server config lives; temporal-compose.yml mounts the same folder. */
export const TEMPORAL_CONFIG_DIR = join(__dirname, '..', '..', 'deploy', 'temporal');
export const TEMPORAL_CONFIG_ENV = 'production-postgres12';

export interface TemporalDatabase {
  host: string;
  port: number;
  user: string;
  password: string;
}

/**
 * The schema steps of the full server, with its own tool (the schema files are embedded in it):
 * create each database, lay the base schema once, then apply every pending version. Safe to run
 * again on a set-up database. temporal-compose.yml runs the same steps.
 */
export const SCHEMA_STEPS: { database: string; schema: string }[] = [
  { database: 'temporal', schema: 'postgresql/v12/temporal' },
  { database: 'temporal_visibility', schema: 'postgresql/v12/visibility' },
];

async function setUpTemporalSchema(sqlTool: string, db: TemporalDatabase): Promise<void> {
  for (const step of SCHEMA_STEPS) {
    const base = [
      '--plugin',
      'postgres12',
      '--ep',
      db.host,
      '-p',
      String(db.port),
      '-u',
      db.user,
      '--pw',
      db.password,
      '--db',
      step.database,
    ];
    await run(sqlTool, [...base, 'create-database'], { timeout: 60_000 }).catch((err: { stderr?: string }) => {
      if (!/already exists/.test(String(err.stderr))) throw err;
    });
    await run(sqlTool, [...base, 'setup-schema', '-v', '0.0'], { timeout: 60_000 }).catch(
      (err: { stderr?: string }) => {
        if (!/already exists/.test(String(err.stderr))) throw err;
      },
    );
    await run(sqlTool, [...base, 'update-schema', '--schema-name', step.schema], { timeout: 300_000 });
  }
}

/**
 * The full Temporal server (all four services in one process) on PostgreSQL, configured by
 * deploy/temporal through the environment, with the `default` namespace registered.
 */
export async function startTemporalServer(opts: {
  toolsDir: string;
  db: TemporalDatabase;
  portBase: number;
  logFile?: NodeJS.WritableStream;
}): Promise<RunningTemporal> {
  await setUpTemporalSchema(join(opts.toolsDir, 'sql'), opts.db);
  const env = {
    ...process.env,
    TEMPORAL_DB_HOST: opts.db.host,
    TEMPORAL_DB_PORT: String(opts.db.port),
    TEMPORAL_DB_USER: opts.db.user,
    TEMPORAL_DB_PASSWORD: opts.db.password,
    TEMPORAL_PORT_BASE: String(opts.portBase),
    TEMPORAL_DYNAMIC_CONFIG: join(TEMPORAL_CONFIG_DIR, 'dynamicconfig', 'production-sql.yaml'),
  };
  const args = [
    '--root',
    TEMPORAL_CONFIG_DIR,
    '--config',
    '.',
    '--env',
    TEMPORAL_CONFIG_ENV,
    '--allow-no-auth',
    'start',
  ];
  const child = spawn(join(opts.toolsDir, 'server'), args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (opts.logFile) {
    child.stdout!.pipe(opts.logFile, { end: false });
    child.stderr!.pipe(opts.logFile, { end: false });
  } else {
    child.stdout!.resume();
    child.stderr!.resume();
  }
  const address = `127.0.0.1:${opts.portBase}`;
  try {
    await untilNamespaceServes(address, 'default', child);
  } catch (err) {
    await stopProcess(child, 2000);
    throw err;
  }
  return { address, uiUrl: null, process: child, stop: () => stopProcess(child) };
}

/**
 * The full server does not create `default`; and a namespace just registered is served only once
 * the frontend's namespace cache refreshes (about 10 s), so wait for a call that goes through it.
 */
async function untilNamespaceServes(
  address: string,
  namespace: string,
  child: ReturnType<typeof spawn>,
): Promise<void> {
  const deadline = Date.now() + 180_000;
  let exited = false;
  let failed: Error | null = null;
  child.once('exit', () => (exited = true));
  // A binary that is missing or not executable: spawn reports it here, not by exiting.
  child.once('error', (err) => (failed = err));
  while (Date.now() < deadline) {
    if (failed) throw new Error(`the server binary could not be run: ${(failed as Error).message}`);
    if (exited)
      throw new Error(
        `temporal server exited during start (${child.signalCode ?? `code ${child.exitCode}`}); see its log`,
      );
    try {
      const connection = await Connection.connect({ address, connectTimeout: '2s' });
      try {
        await ensureNamespace(connection, namespace);
        await connection.workflowService.countWorkflowExecutions({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch {
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  throw new Error('temporal server did not serve the default namespace within 180 s');
}
