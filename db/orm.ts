import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { Config } from '../lib/config';
import { logger } from '../lib/logger';
import { entities } from './entities';
import { migrationsList } from './migrations';

export type Orm = MikroORM;

function ormOptions(config: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX'>): Options {
  return {
    clientUrl: config.DATABASE_URL,
    entities,
    extensions: [Migrator],
    migrations: { migrationsList, transactional: true, allOrNothing: true, silent: true },
    pool: { min: 0, max: config.DATABASE_POOL_MAX, idleTimeoutMillis: 30_000 },
    driverOptions: { connection: { statement_timeout: 15_000, connectionTimeoutMillis: 5_000 } },
    // Discovery is explicit (EntitySchema), so no reflection and no metadata cache on disk.
    discovery: { warnWhenNoEntities: true },
    debug: false,
  };
}

export async function openOrm(config: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX'>): Promise<Orm> {
  return MikroORM.init(ormOptions(config));
}

// Arbitrary but fixed: every process that migrates takes the same advisory lock.
const MIGRATION_LOCK = 7_461_201;

/** Applies pending migrations; safe when several workers and API instances start at once. */
export async function migrate(orm: Orm): Promise<void> {
  const knex = orm.em.getConnection().getKnex();
  await knex.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?)', [MIGRATION_LOCK]);
    const applied = await orm.getMigrator().up();
    if (applied.length) logger.info({ migrations: applied.map((m) => m.name) }, 'migrations applied');
  });
}
