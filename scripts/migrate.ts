/**
 * `npm run migrate` (deployed: `node dist/scripts/migrate.js`): applies pending migrations as the
 * owner role named by DATABASE_MIGRATION_URL, before the services of a release start; they connect
 * with DATABASE_URL's role, which may not (docs/decisions/0265-database-roles-owner-and-service.md).
 * Safe to run twice and beside running services (an advisory lock, db/orm.ts). Exit 0 done, 1 failed,
 * 2 usage.
 */
import { ConfigSchema } from '../lib/runtime/config';
import { migrateAsOwner } from './lib/migrate-as-owner';

async function main(): Promise<number> {
  const parsed = ConfigSchema.shape.DATABASE_MIGRATION_URL.safeParse(process.env.DATABASE_MIGRATION_URL);
  if (!parsed.success || !parsed.data) {
    console.error('usage: DATABASE_MIGRATION_URL=postgres://<owner role>:<password>@<host>/<database> npm run migrate');
    return 2;
  }
  await migrateAsOwner(parsed.data);
  console.log('migrations: none pending');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`migration failed: ${err.message}`);
    process.exit(1);
  },
);
