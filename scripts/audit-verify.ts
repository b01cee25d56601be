/**
 * `npm run -s audit:verify -- --org <org id>`: walks the organisation's audit trail from its first
 * entry, checking each entry's keyed hash (AUDIT_HMAC_KEYS) and its link to the one before
 * (db/audit-log.ts), against the latest checkpoint of every organisation's head, kept in Temporal
 * outside this database (docs/decisions/0267-audit-checkpoints-in-temporal.md): so a rewritten
 * and recomputed chain, a deleted tail and an organisation whose entries were all deleted are each
 * named, with the first entry that does not hold. Exit 0 when the chain holds, 1 at a break, 2 on a
 * usage error or when the check cannot be made (no key, no checkpoint, a checkpoint older than twice
 * AUDIT_CHECKPOINT_INTERVAL_SECONDS: the workflow stopped, docs/decisions/0380-audit-checkpoint-gone-is-seen.md;
 * a database or Temporal out of reach). Read-only (DATABASE_URL, TEMPORAL_ADDRESS), safe while the service runs. Beside `npm
 * start`, with no AUDIT_HMAC_KEYS set, it uses npm start's development key.
 * `--without-checkpoint` checks the chain alone, and says what that cannot see.
 */
import { AuditKeyMissing, verifyAuditChain, type CheckpointedHead } from '../db/audit-log';
import { checkpointHolds } from '../db/audit-checkpoint';
import { openOrm } from '../db/orm';
import { loadAuditToolConfig, type AuditToolConfig } from '../lib/runtime/config';
import { connectClient } from '../lib/runtime/temporal';
import { auditCheckpointWorkflowId } from '../domain/audit-checkpoint';
import { latestAuditCheckpoint } from '../worker/audit-checkpoints';
import { auditKeysBesideNpmStart } from './lib/embedded-defaults';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A check that cannot be made: exit 2, with what to do. */
class CannotVerify extends Error {}

/**
 * This organisation's head in the latest checkpoint (null when the checkpoint has none: no entries when it was
 * taken), and why that checkpoint is stale, if it is: older than twice the interval, so the workflow that takes
 * them has stopped and entries deleted since are not seen.
 */
async function checkpointedHead(
  config: AuditToolConfig,
  orgId: string,
): Promise<{ head: CheckpointedHead | null; stale: string | null }> {
  const client = await connectClient(config);
  const workflowId = auditCheckpointWorkflowId(config.TEMPORAL_TASK_QUEUE);
  try {
    const latest = await latestAuditCheckpoint(client, config);
    if (!latest)
      throw new CannotVerify(
        `no audit checkpoint at workflow ${workflowId} on ${config.TEMPORAL_ADDRESS}: ` +
          'a worker of this deployment takes one at start and every minute (is one running, on this TEMPORAL_TASK_QUEUE?), ' +
          'and starts none when the workflow is gone while the trail holds entries (its log says so: deleted, or ' +
          "Temporal's data lost; docs/decisions/0380-audit-checkpoint-gone-is-seen.md); --without-checkpoint checks the chain alone",
      );
    if (!checkpointHolds(latest))
      throw new CannotVerify(
        `the checkpoint of ${latest.takenAt} is not keyed with this deployment's audit key (AUDIT_HMAC_KEYS): forged, or another deployment's`,
      );
    const head = latest.heads.find((h) => h.orgId === orgId);
    if (latest.heldBack.includes(orgId))
      console.error(
        `note: the worker has reported since ${latest.takenAt} that this trail no longer reaches its checkpoint`,
      );
    const interval = config.AUDIT_CHECKPOINT_INTERVAL_SECONDS;
    const ageSeconds = Math.floor((Date.now() - Date.parse(latest.takenAt)) / 1000);
    const stale =
      ageSeconds > 2 * interval
        ? `the latest audit checkpoint, of ${latest.takenAt}, is ${ageSeconds} s old: more than twice its interval ` +
          `(2 × ${interval} s, AUDIT_CHECKPOINT_INTERVAL_SECONDS): the workflow ${workflowId} has stopped (terminated or ` +
          'deleted, or no worker of this deployment runs), and entries deleted since it are not seen'
        : null;
    return {
      head: head ? { seq: head.seq, hash: head.hash, keyedFrom: head.keyedFrom, takenAt: latest.takenAt } : null,
      stale,
    };
  } finally {
    await client.connection.close();
  }
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const at = args.indexOf('--org');
  const orgId = at >= 0 ? args[at + 1] : undefined;
  const withoutCheckpoint = args.includes('--without-checkpoint');
  if (!orgId || !UUID.test(orgId)) {
    console.error('usage: npm run -s audit:verify -- --org <organisation id> [--without-checkpoint]');
    return 2;
  }
  const config = loadAuditToolConfig(auditKeysBesideNpmStart(process.env));
  if (!config.AUDIT_HMAC_KEYS)
    throw new CannotVerify('AUDIT_HMAC_KEYS is not set: the keys the entries were keyed with');
  // First: opening the ORM also hands the audit keys to db/audit-log.ts, which the checkpoint's check needs.
  const orm = await openOrm(config);
  try {
    const latest = withoutCheckpoint ? { head: null, stale: null } : await checkpointedHead(config, orgId);
    const checkpoint = latest.head;
    const verdict = await verifyAuditChain(orm.em.getConnection().getKnex(), orgId, { checkpoint });
    const against = withoutCheckpoint
      ? 'no checkpoint asked for: a deleted tail or organisation would not be seen'
      : checkpoint
        ? `checkpoint of ${checkpoint.takenAt}: entries up to ${checkpoint.seq}`
        : 'the latest checkpoint has no entries of it';
    if (verdict.ok && latest.stale) {
      console.error(
        `audit verification failed: ${latest.stale}; ${verdict.checked} entries hold against it (${against})`,
      );
      return 2;
    }
    if (verdict.ok) {
      console.log(`audit trail of ${orgId}: ${verdict.checked} entries, chain holds (${against})`);
      return 0;
    }
    const { id, seq, reason } = verdict.broken;
    console.error(
      `audit trail of ${orgId}: broken at entry ${seq}${id ? ` (id ${id})` : ''}: ${reason}; ${verdict.checked} entries before it hold (${against})`,
    );
    if (latest.stale) console.error(`note: ${latest.stale}`);
    return 1;
  } finally {
    await orm.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    const known = err instanceof CannotVerify || err instanceof AuditKeyMissing;
    console.error(`audit verification failed: ${known ? err.message : `${err.name}: ${err.message}`}`);
    process.exit(2);
  },
);
