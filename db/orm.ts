import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { Config } from '../lib/runtime/config';
import { logger } from '../lib/runtime/logger';
import { requestSlot } from '../lib/runtime/request-scope';
import { codesOf, whenReachable } from '../lib/runtime/startup-wait';
import { useAuditKeys } from './audit-log';
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

/**
 * Opens the pool. Also the one place a process's audit keys (AUDIT_HMAC_KEYS) are handed to
 * db/audit-log.ts, since every process that writes or checks audit entries opens the ORM first.
 */
export async function openOrm(
  config: Pick<Config, 'DATABASE_URL' | 'DATABASE_POOL_MAX'> & Partial<Pick<Config, 'AUDIT_HMAC_KEYS'>>,
): Promise<Orm> {
  useAuditKeys(config.AUDIT_HMAC_KEYS);
  // Inside a request, `orm.em` is the request's own fork, made when the request first uses it (rather than
  // MikroORM's RequestContext, which forks for every request and keeps a second AsyncLocalStorage:
  // docs/decisions/0435-one-request-scope.md). Outside one it is the global manager, refused for entity work.
  let orm: Orm | undefined;
  const context = () =>
    orm ? requestSlot(orm, () => orm!.em.fork({ useContext: true, disableContextResolution: true })) : undefined;
  orm = await MikroORM.init({ ...ormOptions(config), context });
  return orm;
}

/**
 * The pool, opened once the database answers: a refused connection or a server still starting is
 * waited out for up to STARTUP_WAIT_SECONDS (lib/runtime/startup-wait.ts); a wrong password or a
 * missing database fails at once. The wait's name for it is the host, port and database, never the
 * URL's password.
 */
export function openOrmWhenReachable(
  config: Parameters<typeof openOrm>[0] & Pick<Config, 'STARTUP_WAIT_SECONDS'>,
): Promise<Orm> {
  const { hostname, port, pathname } = new URL(config.DATABASE_URL);
  return whenReachable(
    {
      name: `PostgreSQL at ${hostname}:${port || 5432}${pathname}`,
      reach: () => openOrm(config),
      notUpYet: (err) =>
        codesOf(err).some((code) => DATABASE_NOT_UP_YET.has(String(code))) ||
        /timeout expired|Connection terminated|Timeout acquiring a connection/i.test((err as Error)?.message ?? ''),
    },
    config.STARTUP_WAIT_SECONDS,
  );
}

/** System calls' codes for a server not listening or not reachable yet, and PostgreSQL's "starting up" (57P03). */
const DATABASE_NOT_UP_YET = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P03',
]);

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

/** Migrations in this build not yet applied, read with the services' rights (a SELECT). */
async function pendingMigrations(orm: Orm): Promise<string[]> {
  const knex = orm.em.getConnection().getKnex();
  const table = await knex.raw(`select to_regclass('mikro_orm_migrations') is not null as present`);
  const present = (table as { rows: { present: boolean }[] }).rows[0]?.present;
  const applied = new Set<string>(
    present ? ((await knex('mikro_orm_migrations').select('name')) as { name: string }[]).map((r) => r.name) : [],
  );
  return migrationsList.map((m) => m.name).filter((name) => !applied.has(name));
}

/**
 * A service's schema step at start (docs/decisions/0265-database-roles-owner-and-service.md).
 * With DATABASE_MIGRATION_URL (the owner role), pending migrations are applied through a small pool
 * opened for it and closed at once, so the service's own pool never holds owner rights.
 * Without it, nothing pending is the normal case (`npm run migrate`, `npm start` and `npm run
 * cluster` migrate as the owner before the services start); anything pending is tried through
 * DATABASE_URL, which works only for a role allowed DDL, and a refusal says what to run.
 */
async function migrateAtStart(
  orm: Orm,
  config: Pick<Config, 'DATABASE_URL' | 'DATABASE_MIGRATION_URL'>,
): Promise<void> {
  if (config.DATABASE_MIGRATION_URL) {
    const owner = await openOrm({ DATABASE_URL: config.DATABASE_MIGRATION_URL, DATABASE_POOL_MAX: 2 });
    try {
      await migrate(owner);
    } finally {
      await owner.close();
    }
    return;
  }
  const pending = await pendingMigrations(orm);
  if (!pending.length) return;
  try {
    await migrate(orm);
  } catch (err) {
    throw new Error(
      `${pending.length} migration(s) pending (${pending.join(', ')}) and DATABASE_URL's role could not apply them: ` +
        "run `npm run migrate` with DATABASE_MIGRATION_URL set to the owner role's URL, then start again",
      { cause: err },
    );
  }
}

/** Whether the connected role is a superuser or owns the audit trail: either could rewrite it (docs/decisions/0265). */
async function servicePrivilegeProblems(orm: Orm): Promise<string[]> {
  const result = await orm.em.getConnection().getKnex().raw(`
    select r.rolsuper as superuser, r.rolname as role,
           coalesce(pg_has_role(current_user, c.relowner, 'USAGE'), false) as owner
      from pg_roles r left join pg_class c on c.oid = to_regclass('audit_events')
     where r.rolname = current_user`);
  const row = (result as { rows: { superuser: boolean; owner: boolean; role: string }[] }).rows[0];
  if (!row) return [];
  return [
    ...(row.superuser ? [`the role ${row.role} is a superuser`] : []),
    ...(row.owner ? [`the role ${row.role} owns (or is a member of the owner of) audit_events`] : []),
  ];
}

/**
 * What the API and the worker do with the database at start: the schema step (migrateAtStart),
 * then a look at their own role. In production a superuser or the audit table's owner is refused,
 * since either could switch its trigger off; elsewhere it is a warning (a single-role setup).
 */
export async function prepareServiceDatabase(
  orm: Orm,
  config: Pick<Config, 'DATABASE_URL' | 'DATABASE_MIGRATION_URL' | 'NODE_ENV'>,
): Promise<void> {
  await migrateAtStart(orm, config);
  const problems = await servicePrivilegeProblems(orm);
  if (!problems.length) return;
  const message = `DATABASE_URL: ${problems.join('; ')}; the services need a role with row rights only, a member of tranche_service (docs/decisions/0265-database-roles-owner-and-service.md)`;
  if (config.NODE_ENV === 'production') throw new Error(message);
  logger.warn(message);
}
