import { join } from 'node:path';
import type { RunningPostgres } from './embedded-postgres';
import { migrateAsOwner, migrateAsRelease } from './migrate-as-owner';
import { startingPart } from './startup-error';
import type { TemporalDatabase } from './temporal-server';

/** The cluster's PostgreSQL, migrated: the services' URL, and Temporal's connection (the owner's role). */
export interface ClusterDatabase {
  url: string;
  /** The owner's URL: migrations only. */
  ownerUrl: string;
  temporal: TemporalDatabase;
  /** Stops the embedded server the cluster started; a server it was given is left running. */
  stop(): Promise<void>;
}

/**
 * The PostgreSQL server the cluster was given (`databaseUrl`, and the owner's `migrationUrl` for
 * migrations), or an embedded one on `pgPort` with its data in the data folder. The migrations run
 * here, as the owner (docs/decisions/0265); the services only ever hold `url`.
 */
export async function startClusterDatabase(o: {
  dataDir: string;
  pgPort: number;
  databaseUrl?: string;
  migrationUrl?: string;
  /** Another build whose own migrations lay the schema (ClusterOptions.release). */
  release?: string;
}): Promise<ClusterDatabase> {
  const embedded = o.databaseUrl ? null : await startEmbedded(o.dataDir, o.pgPort);
  try {
    const url = embedded ? embedded.serviceUrl('tranche') : o.databaseUrl!;
    const ownerUrl = embedded ? embedded.url('tranche') : (o.migrationUrl ?? o.databaseUrl!);
    await startingPart(
      {
        part: 'the database migrations (as the owner)',
        remedy: 'read the error; the owner role (DATABASE_MIGRATION_URL) must be allowed DDL on the database',
      },
      () => (o.release ? migrateAsRelease(o.release, ownerUrl) : migrateAsOwner(ownerUrl)),
    );
    const owner = new URL(ownerUrl);
    return {
      url,
      ownerUrl,
      temporal: {
        host: owner.hostname,
        port: Number(owner.port || 5432),
        user: decodeURIComponent(owner.username),
        password: decodeURIComponent(owner.password),
      },
      stop: async () => embedded?.stop(),
    };
  } catch (err) {
    await embedded?.stop().catch(() => undefined);
    throw err;
  }
}

/** An embedded PostgreSQL kept in the data folder, with the service's database and its row-rights role. */
async function startEmbedded(dataDir: string, port: number): Promise<RunningPostgres> {
  // Loaded only when used: embedded-postgres is an ES module, which the tests' CommonJS cannot load.
  const { startEmbeddedPostgres } = await import('./embedded-postgres');
  const dir = join(dataDir, 'postgres');
  const logFile = join(dataDir, 'postgres.log');
  const postgres = await startingPart(
    {
      part: `PostgreSQL (embedded, port ${port}, data in ${dir})`,
      remedy:
        'read its log; if another PostgreSQL runs on this data folder (left over from an earlier run), stop it; if the folder is damaged, move it away and start again (the data is made anew)',
      log: logFile,
    },
    () => startEmbeddedPostgres({ dir, port, persistent: true, logFile }),
  );
  try {
    await postgres.createDatabase('tranche');
    await postgres.ensureServiceRole();
    return postgres;
  } catch (err) {
    await postgres.stop().catch(() => undefined);
    throw err;
  }
}
