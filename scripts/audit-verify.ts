/**
 * `npm run -s audit:verify -- --org <org id>`: walks the organisation's audit trail from its first
 * entry, checking each entry's hash and its link to the one before (db/audit-log.ts), and names the
 * first entry that does not hold. Exit 0 when the chain holds, 1 at a break, 2 on a usage error.
 * Straight to DATABASE_URL; read-only, safe while the service runs.
 */
import { verifyAuditChain } from '../db/audit-log';
import { openOrm } from '../db/orm';
import { loadDatabaseConfig } from '../lib/config';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const at = args.indexOf('--org');
  const orgId = at >= 0 ? args[at + 1] : undefined;
  if (!orgId || !UUID.test(orgId)) {
    console.error('usage: npm run -s audit:verify -- --org <organisation id>');
    return 2;
  }
  const orm = await openOrm(loadDatabaseConfig());
  try {
    const verdict = await verifyAuditChain(orm.em.getConnection().getKnex(), orgId);
    if (verdict.ok) {
      console.log(`audit trail of ${orgId}: ${verdict.checked} entries, chain holds`);
      return 0;
    }
    const { id, seq, reason } = verdict.broken;
    console.error(
      `audit trail of ${orgId}: broken at entry ${seq}${id ? ` (id ${id})` : ''}: ${reason}; ${verdict.checked} entries before it hold`,
    );
    return 1;
  } finally {
    await orm.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`audit verification failed: ${err.message}`);
    process.exit(2);
  },
);
