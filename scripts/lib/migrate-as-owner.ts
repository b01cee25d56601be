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

/**
 * The same with another build's migrations: `node <release>/dist/scripts/migrate.js`, so its schema is
 * what that release laid (the rolling-upgrade test's previous release, before today's migrations run).
 */
export async function migrateAsRelease(release: string, ownerUrl: string): Promise<void> {
  const { execFile } = await import('node:child_process');
  const { join } = await import('node:path');
  await new Promise<void>((resolve, reject) =>
    execFile(
      process.execPath,
      [join(release, 'dist', 'scripts', 'migrate.js')],
      { cwd: release, env: { ...process.env, DATABASE_MIGRATION_URL: ownerUrl }, timeout: 300_000 },
      (err, _stdout, stderr) =>
        err ? reject(new Error(`${release}'s migrations failed: ${stderr || err.message}`)) : resolve(),
    ),
  );
}
