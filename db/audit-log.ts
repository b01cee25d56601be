import { createHash, createHmac } from 'node:crypto';
import type { Knex } from '@mikro-orm/postgresql';
import { newId } from '../lib/ids';

/** Who acted; each part is null when the request did not carry it (a console session has no API key). */
export interface AuditActor {
  userId: string | null;
  roles: string[];
  apiKeyId: string | null;
  session: string | null;
  clientAddress: string | null;
  requestId: string | null;
}

type AuditOutcome = { outcome: 'succeeded' } | { outcome: 'refused'; errorCode: string };

export interface AuditEntryInput {
  orgId: string;
  actor: AuditActor;
  /** `<resource>.<verb>`, e.g. `api_key.issue`, `subscription.approve`. */
  action: string;
  subject: { type: string; id: string };
  result: AuditOutcome;
  /** A short picture of what changed: a few fields, never a secret. */
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

/** A row of audit_events as PostgreSQL returns it. */
export interface AuditRow {
  id: string;
  org_id: string;
  seq: string;
  occurred_at: Date;
  actor_user_id: string | null;
  actor_roles: string[];
  actor_api_key_id: string | null;
  actor_session: string | null;
  action: string;
  subject_type: string;
  subject_id: string;
  outcome: 'succeeded' | 'refused';
  error_code: string | null;
  client_address: string | null;
  request_id: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  prev_hash: string;
  /** The AUDIT_HMAC_KEYS id the hash is keyed with; null for an entry written before keys (plain SHA-256, migration 0064). */
  key_id: string | null;
  hash: string;
}

/** One key of AUDIT_HMAC_KEYS (lib/runtime/config.ts): its id and its 32 bytes. */
export interface AuditKey {
  id: string;
  key: Buffer;
}

/**
 * The process's audit keys, the current (signing) one first: set once at start from
 * AUDIT_HMAC_KEYS by openOrm (db/orm.ts), which every process that writes or checks entries calls.
 */
let keyring: readonly AuditKey[] = [];

export function useAuditKeys(keys: readonly AuditKey[] | undefined): void {
  if (keys?.length) keyring = keys;
}

/** A key id an entry or checkpoint names that AUDIT_HMAC_KEYS does not hold: the check cannot be made. */
export class AuditKeyMissing extends Error {}

export function auditKey(id: string, keys: readonly AuditKey[] = keyring): AuditKey {
  const found = keys.find((k) => k.id === id);
  if (!found)
    throw new AuditKeyMissing(`audit key "${id}" is not in AUDIT_HMAC_KEYS: add it (keys are kept for verifying)`);
  return found;
}

/** The key new entries and checkpoints are keyed with. */
export function currentAuditKey(keys: readonly AuditKey[] = keyring): AuditKey {
  const current = keys[0];
  if (!current)
    throw new AuditKeyMissing(
      'AUDIT_HMAC_KEYS is not set: audit entries are keyed with a key kept outside the database (lib/runtime/config.ts)',
    );
  return current;
}

/** The previous hash of an organisation's first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/** JSON with object keys sorted at every depth: jsonb keeps its own key order, so the hash must not depend on one. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/**
 * Everything a row says except its own hash, in one canonical form. The key id is part of a keyed
 * entry's form; an entry from before keys keeps the form it was hashed in (no key_id field).
 */
const canonicalEntry = (r: Omit<AuditRow, 'hash'>) =>
  canonicalJson({
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
    prev_hash: r.prev_hash,
    ...(r.key_id === null ? {} : { key_id: r.key_id }),
  });

/**
 * A keyed entry: HMAC-SHA256 under its key over the previous entry's hash and this entry's
 * canonical form, so no one without the key can recompute it (docs/decisions/0266). An entry
 * from before keys: the plain SHA-256 of the same, as it was written.
 */
function entryHash(r: Omit<AuditRow, 'hash'>, keys: readonly AuditKey[] = keyring): string {
  const mac = r.key_id === null ? createHash('sha256') : createHmac('sha256', auditKey(r.key_id, keys).key);
  return mac.update(r.prev_hash).update('\n').update(canonicalEntry(r)).digest('hex');
}

/**
 * Appends one entry to its organisation's chain inside the caller's transaction, so it commits
 * or rolls back with the change it records. Writers of one organisation take turns on an
 * advisory lock held to the end of the transaction, so each links to the entry before it.
 */
export async function appendAuditEvent(db: Knex | Knex.Transaction, input: AuditEntryInput): Promise<AuditRow> {
  // Refused before anything is written: an entry is never stored unkeyed.
  const key = currentAuditKey();
  const run = async (trx: Knex.Transaction) => {
    await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`audit:${input.orgId}`]);
    const last: { seq: string; hash: string } | undefined = await trx('audit_events')
      .where({ org_id: input.orgId })
      .orderBy('seq', 'desc')
      .first('seq', 'hash');
    const row: Omit<AuditRow, 'hash'> = {
      id: newId(),
      org_id: input.orgId,
      seq: String(last ? BigInt(last.seq) + 1n : 1n),
      occurred_at: new Date(),
      actor_user_id: input.actor.userId,
      actor_roles: [...input.actor.roles].sort(),
      actor_api_key_id: input.actor.apiKeyId,
      actor_session: input.actor.session,
      action: input.action,
      subject_type: input.subject.type,
      subject_id: input.subject.id,
      outcome: input.result.outcome,
      error_code: input.result.outcome === 'refused' ? input.result.errorCode : null,
      client_address: input.actor.clientAddress,
      request_id: input.actor.requestId,
      before: input.before ?? null,
      after: input.after ?? null,
      prev_hash: last?.hash ?? GENESIS_HASH,
      key_id: key.id,
    };
    const full: AuditRow = { ...row, hash: entryHash(row) };
    await trx('audit_events').insert({
      ...full,
      before: full.before === null ? null : JSON.stringify(full.before),
      after: full.after === null ? null : JSON.stringify(full.after),
    });
    return full;
  };
  return 'isTransaction' in db && db.isTransaction ? run(db as Knex.Transaction) : (db as Knex).transaction(run);
}

/** What a checkpoint (outside this database) says of one organisation's chain: domain/audit-checkpoint.ts. */
export interface CheckpointedHead {
  seq: string;
  hash: string;
  /** The first keyed entry's seq, once the chain has one: no entry from there on may be unkeyed. */
  keyedFrom: string | null;
  /** When the checkpoint was taken (ISO 8601), to name it. */
  takenAt: string;
}

export type ChainVerdict =
  | { ok: true; checked: number }
  | { ok: false; checked: number; broken: { id: string | null; seq: string; reason: string } };

/**
 * Walks an organisation's chain from its first entry and names the first one that does not hold:
 * its link or its (keyed) hash, an unkeyed entry after a keyed one, a seq missing, and, against the
 * checkpoint when one is given, an entry whose hash is not the checkpointed one or entries the
 * checkpoint saw that are gone (a deleted tail, a deleted organisation). Entries newer than the
 * checkpoint are held by the keyed chain alone. Throws AuditKeyMissing when an entry names a key
 * AUDIT_HMAC_KEYS does not hold.
 */
export async function verifyAuditChain(
  knex: Knex,
  orgId: string,
  opts: { checkpoint?: CheckpointedHead | null; batch?: number; keys?: readonly AuditKey[] } = {},
): Promise<ChainVerdict> {
  const { checkpoint = null, batch = 1000, keys = keyring } = opts;
  let prevHash = GENESIS_HASH;
  let expectedSeq = 1n;
  let checked = 0;
  let keyedFrom: bigint | null = checkpoint?.keyedFrom ? BigInt(checkpoint.keyedFrom) : null;
  const checkpointSeq = checkpoint ? BigInt(checkpoint.seq) : 0n;
  for (;;) {
    const rows: AuditRow[] = await knex('audit_events')
      .where({ org_id: orgId })
      .andWhere('seq', '>=', String(expectedSeq))
      .orderBy('seq', 'asc')
      .limit(batch);
    for (const r of rows) {
      const broken = (reason: string): ChainVerdict => ({
        ok: false,
        checked,
        broken: { id: r.id, seq: r.seq, reason },
      });
      const seq = BigInt(r.seq);
      if (seq !== expectedSeq)
        return { ok: false, checked, broken: { id: null, seq: String(expectedSeq), reason: 'entry missing' } };
      if (r.prev_hash !== prevHash) return broken('previous hash does not match the entry before');
      if (r.key_id === null && keyedFrom !== null && seq >= keyedFrom)
        return broken(`not keyed, though the chain is keyed from entry ${keyedFrom}`);
      const { hash, ...rest } = r;
      if (entryHash(rest, keys) !== hash) return broken('content does not match its hash');
      if (seq === checkpointSeq && hash !== checkpoint!.hash)
        return broken(`hash is not the one the checkpoint of ${checkpoint!.takenAt} holds`);
      if (r.key_id !== null && keyedFrom === null) keyedFrom = seq;
      prevHash = hash;
      expectedSeq += 1n;
      checked += 1;
    }
    if (rows.length < batch) break;
  }
  if (expectedSeq <= checkpointSeq)
    return {
      ok: false,
      checked,
      broken: {
        id: null,
        seq: String(expectedSeq),
        reason: `entry missing: the checkpoint of ${checkpoint!.takenAt} holds entries up to ${checkpoint!.seq}`,
      },
    };
  return { ok: true, checked };
}
