/**
 * Runs a command (the test runner) with PostgreSQL and Temporal up: the ones named by
 * DATABASE_URL / TEMPORAL_ADDRESS, or embedded ones started here and stopped afterwards.
 *   tsx scripts/with-stack.ts -- jest ...
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePortRange } from './lib/free-port';
import { startStack } from './lib/stack';
import { DEV_AUDIT_HMAC_KEYS, DEV_PERSONAL_DATA_KEYS } from './lib/embedded-defaults';
import { newPayloadKey } from './lib/payload-key-file';

async function main(): Promise<number> {
  const command = process.argv.slice(process.argv.indexOf('--') + 1);
  const dataDir = mkdtempSync(join(tmpdir(), 'tranche-test-'));
  // TRANCHE_TEST_TEMPORAL=cluster: the full Temporal server on PostgreSQL (scripts/test-cluster.sh).
  const full = process.env.TRANCHE_TEST_TEMPORAL === 'cluster';
  const stack = await startStack({
    dataDir,
    database: 'tranche_test',
    persistent: false,
    temporalCli: process.env.TEMPORAL_CLI,
    temporalServerDir: full ? process.env.TEMPORAL_SERVER_DIR : undefined,
    temporalPort: full ? await freePortRange(210) : undefined,
  });
  const env = {
    ...process.env,
    // The tests' explicit opt-in to development conveniences (unset is production, lib/runtime/config.ts):
    // every process a test starts inherits it, whatever the shell had (docs/decisions/0259).
    NODE_ENV: 'test',
    // The services' role; the owner's URL (the embedded superuser) makes and migrates each test's
    // database (test/support/service.ts freshDatabase) and tampers in test/operations/audit-tamper.test.ts.
    DATABASE_URL: stack.databaseUrl,
    TRANCHE_TEST_DATABASE_OWNER_URL: stack.migrationUrl,
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TRANCHE_TEST_DATA_DIR: dataDir,
    AUDIT_HMAC_KEYS: process.env.AUDIT_HMAC_KEYS ?? DEV_AUDIT_HMAC_KEYS,
    PERSONAL_DATA_KEYS: process.env.PERSONAL_DATA_KEYS ?? DEV_PERSONAL_DATA_KEYS,
    // Every client and worker of the run seals payloads, as deployed (lib/runtime/payload-codec.ts).
    TEMPORAL_PAYLOAD_KEYS: process.env.TEMPORAL_PAYLOAD_KEYS ?? newPayloadKey(),
  };
  const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit', env });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward).on('SIGTERM', forward);
  const code = await new Promise<number>((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
  await stack.stop();
  rmSync(dataDir, { recursive: true, force: true });
  return code;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
