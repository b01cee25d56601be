import { chmodSync, createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded-postgres';
import { freePort } from './free-port';
import { startTemporalDevServer, type RunningTemporal } from './temporal-dev-server';
import { temporalSetup } from '../temporal-setup';
import { startTemporalServer } from './temporal-server';

export interface Stack {
  databaseUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  /** The embedded PostgreSQL, when this stack started one (tests use it to make databases). */
  postgres: RunningPostgres | null;
  temporal: RunningTemporal | null;
  stop(): Promise<void>;
}

/**
 * PostgreSQL and Temporal for this machine: DATABASE_URL and TEMPORAL_ADDRESS when the
 * environment names them, otherwise the embedded defaults, started here.
 */
export async function startStack(opts: {
  dataDir: string;
  database: string;
  persistent: boolean;
  temporalCli?: string;
  /** The full Temporal server's tools folder (scripts/tools.sh temporal-server): run it, on this PostgreSQL, instead of the dev server. */
  temporalServerDir?: string;
  pgPort?: number;
  temporalPort?: number;
  uiPort?: number;
}): Promise<Stack> {
  mkdirSync(opts.dataDir, { recursive: true });
  // Run as root, embedded-postgres runs the server as a `postgres` user, which must reach the folder.
  chmodSync(opts.dataDir, 0o755);
  const started: { stop(): Promise<void> }[] = [];
  try {
    let postgres: RunningPostgres | null = null;
    let databaseUrl = process.env.DATABASE_URL;
    if (!databaseUrl) {
      postgres = await startEmbeddedPostgres({
        dir: join(opts.dataDir, 'postgres'),
        port: opts.pgPort ?? (await freePort()),
        persistent: opts.persistent,
      });
      started.push(postgres);
      await postgres.createDatabase(opts.database);
      databaseUrl = postgres.url(opts.database);
    }

    let temporal: RunningTemporal | null = null;
    let temporalAddress = process.env.TEMPORAL_ADDRESS;
    if (!temporalAddress && opts.temporalServerDir) {
      const url = new URL(databaseUrl);
      temporal = await startTemporalServer({
        toolsDir: opts.temporalServerDir,
        db: {
          host: url.hostname,
          port: Number(url.port || 5432),
          user: decodeURIComponent(url.username),
          password: decodeURIComponent(url.password),
        },
        portBase: opts.temporalPort ?? 7233,
        logFile: createWriteStream(join(opts.dataDir, 'temporal.log'), { flags: 'a' }),
      });
      started.push(temporal);
      temporalAddress = temporal.address;
    }
    if (!temporalAddress) {
      if (!opts.temporalCli)
        throw new Error('TEMPORAL_ADDRESS is not set and no Temporal CLI was given (scripts/tools.sh temporal)');
      temporal = await startTemporalDevServer({
        binary: opts.temporalCli,
        port: opts.temporalPort ?? (await freePort()),
        uiPort: opts.uiPort,
        dbFile: opts.persistent ? join(opts.dataDir, 'temporal.db') : undefined,
        logFile: createWriteStream(join(opts.dataDir, 'temporal.log'), { flags: 'a' }),
      });
      started.push(temporal);
      temporalAddress = temporal.address;
    }

    // What a worker no longer does at start (it holds no operator rights): npm run temporal:setup.
    await temporalSetup({ ...process.env, TEMPORAL_ADDRESS: temporalAddress });

    return {
      databaseUrl,
      temporalAddress,
      temporalUiUrl: temporal?.uiUrl ?? null,
      postgres,
      temporal,
      stop: () => stopAll(started),
    };
  } catch (err) {
    await stopAll(started);
    throw err;
  }
}

async function stopAll(started: { stop(): Promise<void> }[]): Promise<void> {
  for (const s of started.reverse()) await s.stop().catch(() => undefined);
}
