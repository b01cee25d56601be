import { migrate, openOrm } from '../../db/orm';

/**
 * Applies pending migrations as the owner role (docs/decisions/0265): a small pool on
 * `ownerUrl`, closed at once, so no process that serves keeps owner rights. `npm start`, `npm run
 * cluster`, the tests' stack and `npm run migrate` go through it before any service starts.
 */
export async function migrateAsOwner(ownerUrl: string): Promise<void> {
  // Two: migrate() holds the advisory lock on one while the migrator works on the other.
  const orm = await openOrm({ DATABASE_URL: ownerUrl, DATABASE_POOL_MAX: 2 });
  try {
    await migrate(orm);
  } finally {
    await orm.close();
  }
}
