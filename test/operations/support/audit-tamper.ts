import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import { canonicalJson, type AuditRow } from '../../../db/audit-log';
import {
  AUDIT_CHECKPOINT_NOW,
  auditCheckpointWorkflowId,
  type AuditCheckpoint,
} from '../../../domain/audit-checkpoint';
import { latestAuditCheckpoint } from '../../../worker/audit-checkpoints';
import { actor } from '../../support/fixtures';
import { http } from '../../support/http';
import { ownerUrlOf, type TestService } from '../../support/service';
import { until } from '../../support/wait';

const run = promisify(execFile);
const root = join(__dirname, '..', '..', '..');

/** `n` audited actions of a fresh organisation's admin, through the API (each issues an API key). */
export async function auditedOrg(svc: TestService, n: number): Promise<string> {
  const admin = await actor(svc, randomUUID(), ['admin']);
  const api = http(svc.baseUrl);
  for (let i = 0; i < n; i++) {
    const issued = await api.post(
      '/identity/api-keys',
      admin.token,
      { name: `tamper-${i}` },
      {
        'idempotency-key': randomUUID(),
      },
    );
    if (issued.status !== 201) throw new Error(`api key: ${issued.status} ${JSON.stringify(issued.body)}`);
  }
  return admin.orgId;
}

/**
 * The test stack's PostgreSQL superuser on the service's database (scripts/with-stack.ts): the
 * one who may switch triggers off for a session and rewrite the table.
 */
export async function asSuperuser<T>(svc: TestService, use: (db: PgClient) => Promise<T>): Promise<T> {
  const db = new PgClient({ connectionString: ownerUrlOf(svc.config.DATABASE_URL), connectionTimeoutMillis: 5000 });
  await db.connect();
  try {
    // With replication's role, no ordinary trigger fires for this session.
    await db.query(`set session_replication_role = replica`);
    return await use(db);
  } finally {
    await db.end();
  }
}

/**
 * What someone holding the database (and this code, which is public) can do: change an entry and
 * recompute every hash from it on, with the plain SHA-256 of the chain before keys (no key_id), so
 * every link holds again.
 */
export async function recomputePlainFrom(db: PgClient, orgId: string, fromSeq: number): Promise<void> {
  const { rows } = await db.query<AuditRow>(`select * from audit_events where org_id = $1 order by seq`, [orgId]);
  let prev = rows[fromSeq - 2]?.hash ?? '0'.repeat(64);
  for (const r of rows.slice(fromSeq - 1)) {
    const form = canonicalJson({
      id: r.id,
      org_id: r.org_id,
      seq: String(r.seq),
      occurred_at: new Date(r.occurred_at).toISOString(),
      actor_user_id: r.actor_user_id,
      actor_roles: r.actor_roles,
      actor_api_key_id: r.actor_api_key_id,
      actor_session: r.actor_session,
      action: r.action,
      subject_type: r.subject_type,
      subject_id: r.subject_id,
      outcome: r.outcome,
      error_code: r.error_code,
      client_address: r.client_address,
      request_id: r.request_id,
      before: r.before,
      after: r.after,
      prev_hash: prev,
    });
    const hash = createHash('sha256').update(prev).update('\n').update(form).digest('hex');
    await db.query(`update audit_events set prev_hash = $2, hash = $3, key_id = null where id = $1`, [
      r.id,
      prev,
      hash,
    ]);
    prev = hash;
  }
}

/** Asks the service's checkpoint workflow for a checkpoint now and waits for it (worker/audit-checkpoints.ts). */
export async function checkpointNow(svc: TestService): Promise<AuditCheckpoint> {
  const asked = new Date().toISOString();
  await svc.temporal.workflow
    .getHandle(auditCheckpointWorkflowId(svc.config.TEMPORAL_TASK_QUEUE))
    .signal(AUDIT_CHECKPOINT_NOW);
  const latest = await until(
    `a checkpoint taken after ${asked}`,
    () => latestAuditCheckpoint(svc.temporal, svc.config),
    (c) => !!c && c.takenAt > asked,
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  return latest!;
}

/** The command of docs/operators/audit.md, `npm run -s audit:verify -- --org <id>`, on the service's database and Temporal. */
export async function auditVerify(
  svc: TestService,
  orgId: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return run('npm', ['run', '-s', 'audit:verify', '--', '--org', orgId], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: svc.config.DATABASE_URL,
      TEMPORAL_TASK_QUEUE: svc.config.TEMPORAL_TASK_QUEUE,
      AUDIT_CHECKPOINT_INTERVAL_SECONDS: String(svc.config.AUDIT_CHECKPOINT_INTERVAL_SECONDS),
      LOG_LEVEL: 'silent',
    },
    timeout: 60_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      stdout: err.stdout,
      stderr: err.stderr,
    }),
  );
}
