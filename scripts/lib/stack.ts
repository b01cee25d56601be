import { chmodSync, createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded-postgres';
import { freePort } from './free-port';
import { startTemporalDevServer, type RunningTemporal } from './temporal-dev-server';
import { temporalSetup } from '../temporal-setup';
import { startTemporalServer } from './temporal-server';
import { ensurePortsFree, type WantedPort } from './ports';
import { startingPart, StartupError } from './startup-error';
import { migrateAsOwner } from './migrate-as-owner';

export interface Stack {
  /** The services' URL (a role with row rights only, docs/decisions/0265): DATABASE_URL for every process. */
  databaseUrl: string;
  /** The owner's URL, for migrations (already applied here) and for nothing that serves. */
  migrationUrl: string;
  temporalAddress: string;
  temporalUiUrl: string | null;
  /** The embedded PostgreSQL, when this stack started one (tests use it to make databases). */
  postgres: RunningPostgres | null;
  temporal: RunningTemporal | null;
  stop(): Promise<void>;
}

/**
 * PostgreSQL and Temporal for this machine: DATABASE_URL and TEMPORAL_ADDRESS when the
 * environment names them, otherwise the embedded defaults, started here. The database is migrated
 * here, as its owner (the embedded superuser, or DATABASE_MIGRATION_URL, else DATABASE_URL), before
 * any service starts; the services then get the service role's URL (docs/decisions/0265).
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
  /** The codec server the dev server's Web UI uses (npm start: the API's /console/codec). */
  uiCodecEndpoint?: string;
  /**
   * The command a person ran (`npm start`): its fixed ports (and `ports`, the caller's own) are
   * checked before anything starts, and a failure names the part, its log and what to do.
   */
  command?: string;
  ports?: WantedPort[];
}): Promise<Stack> {
  const embeddedPg = !process.env.DATABASE_URL;
  const devServer = !process.env.TEMPORAL_ADDRESS && !opts.temporalServerDir;
  if (opts.command) {
    const wanted: WantedPort[] = [...(opts.ports ?? [])];
    if (embeddedPg && opts.pgPort)
      wanted.push({ port: opts.pgPort, part: 'PostgreSQL (embedded)', setting: 'EMBEDDED_PG_PORT' });
    if (devServer && opts.temporalPort)
      wanted.push({ port: opts.temporalPort, part: 'the Temporal dev server', setting: 'TEMPORAL_PORT' });
    if (devServer && opts.uiPort)
      wanted.push({ port: opts.uiPort, part: 'the Temporal Web UI', setting: 'TEMPORAL_UI_PORT' });
    await ensurePortsFree(wanted, opts.command);
  }
  mkdirSync(opts.dataDir, { recursive: true });
  // Run as root, embedded-postgres runs the server as a `postgres` user, which must reach the folder.
  chmodSync(opts.dataDir, 0o755);
  const started: { stop(): Promise<void> }[] = [];
  try {
    let postgres: RunningPostgres | null = null;
    let databaseUrl = process.env.DATABASE_URL;
    let migrationUrl = process.env.DATABASE_MIGRATION_URL || databaseUrl;
    if (!databaseUrl) {
      const port = opts.pgPort ?? (await freePort());
      const dir = join(opts.dataDir, 'postgres');
      const part = {
        part: `PostgreSQL (embedded, port ${port}, data in ${dir})`,
        remedy: `read its log; if another PostgreSQL runs on this data folder (left over from an earlier run), stop it; if the folder is damaged, move it away and start again (the data is made anew)`,
        log: join(opts.dataDir, 'postgres.log'),
      };
      postgres = await startingPart(part, () =>
        startEmbeddedPostgres({ dir, port, persistent: opts.persistent, logFile: part.log }),
      );
      started.push(postgres);
      await startingPart(part, () => postgres!.createDatabase(opts.database));
      await startingPart(part, () => postgres!.ensureServiceRole());
      migrationUrl = postgres.url(opts.database);
      databaseUrl = postgres.serviceUrl(opts.database);
    }
    const ownerUrl = migrationUrl!;
    await startingPart(
      {
        part: `the database migrations (as the owner, ${new URL(ownerUrl).username})`,
        remedy:
          'read the error above; the owner role must be allowed DDL on the database (docs/decisions/0265-database-roles-owner-and-service.md)',
      },
      () => migrateAsOwner(ownerUrl),
    );

    let temporal: RunningTemporal | null = null;
    let temporalAddress = process.env.TEMPORAL_ADDRESS;
    const toolsDir = opts.temporalServerDir;
    if (!temporalAddress && toolsDir) {
      // Temporal's own databases are made by the owner (on the embedded server, the superuser).
      const url = new URL(ownerUrl);
      temporal = await startingPart(
        {
          part: 'the Temporal server',
          remedy: `read its log; check that PostgreSQL at ${url.host} takes connections`,
          log: join(opts.dataDir, 'temporal.log'),
        },
        () =>
          startTemporalServer({
            toolsDir,
            db: {
              host: url.hostname,
              port: Number(url.port || 5432),
              user: decodeURIComponent(url.username),
              password: decodeURIComponent(url.password),
            },
            portBase: opts.temporalPort ?? 7233,
            logFile: createWriteStream(join(opts.dataDir, 'temporal.log'), { flags: 'a' }),
          }),
      );
      started.push(temporal);
      temporalAddress = temporal.address;
    }
    if (!temporalAddress) {
      const cli = opts.temporalCli;
      if (!cli)
        throw new StartupError({
          part: 'the Temporal dev server',
          problem: 'TEMPORAL_ADDRESS is not set and no Temporal CLI was given (TEMPORAL_CLI)',
          remedy:
            'run it through `npm start`, which builds the CLI (bash scripts/tools.sh temporal), or set TEMPORAL_ADDRESS',
        });
      const port = opts.temporalPort ?? (await freePort());
      const dbFile = opts.persistent ? join(opts.dataDir, 'temporal.db') : undefined;
      const log = join(opts.dataDir, 'temporal.log');
      temporal = await startingPart(
        {
          part: `the Temporal dev server (port ${port}${opts.uiPort ? `, Web UI ${opts.uiPort}` : ''})`,
          remedy: `read its log${dbFile ? `; if its database file ${dbFile} is damaged, move it away (workflows in it are lost)` : ''}`,
          log,
        },
        () =>
          startTemporalDevServer({
            binary: cli,
            port,
            uiPort: opts.uiPort,
            uiCodecEndpoint: opts.uiCodecEndpoint,
            dbFile,
            logFile: createWriteStream(log, { flags: 'a' }),
          }),
      );
      started.push(temporal);
      temporalAddress = temporal.address;
    }

    // What a worker no longer does at start (it holds no operator rights): npm run temporal:setup.
    await startingPart(
      {
        part: `the Temporal setup (namespace and search attributes, at ${temporalAddress})`,
        remedy: 'check that Temporal answers at that address, then run `npm run temporal:setup` to see the whole error',
      },
      () => temporalSetup({ ...process.env, TEMPORAL_ADDRESS: temporalAddress }),
    );

    return {
      databaseUrl,
      migrationUrl: ownerUrl,
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
