import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Knex } from '@mikro-orm/postgresql';
import type { AuditCheckpoint, AuditHead } from '../domain/audit-checkpoint';
import { auditKey, canonicalJson, currentAuditKey, type AuditKey } from './audit-log';

type Unsigned = Pick<AuditCheckpoint, 'takenAt' | 'heads' | 'heldBack'>;

const checkpointMac = (c: Unsigned, key: AuditKey) =>
  createHmac('sha256', key.key)
    .update('audit-checkpoint\n')
    .update(canonicalJson({ takenAt: c.takenAt, heads: c.heads, heldBack: c.heldBack }))
    .digest('hex');

/** Whether a checkpoint is one this deployment's audit key made (throws AuditKeyMissing for an unknown key id). */
export function checkpointHolds(c: AuditCheckpoint, keys?: readonly AuditKey[]): boolean {
  const expected = Buffer.from(checkpointMac(c, auditKey(c.keyId, keys)), 'hex');
  const given = Buffer.from(c.mac, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Whether the audit trail holds any entry at all (one index probe). */
export async function auditTrailHasEntries(knex: Knex): Promise<boolean> {
  const result = await knex.raw('select exists (select 1 from audit_events) as any');
  return (result as { rows: { any: boolean }[] }).rows[0]!.any;
}

/**
 * Every organisation's newest entry, one index probe each (a loose index scan over
 * `unique (org_id, seq)`): cheap every minute however long the chains are.
 */
async function currentHeads(
  knex: Knex,
): Promise<{ org_id: string; seq: string; hash: string; key_id: string | null }[]> {
  const result = await knex.raw(`
    with recursive orgs as (
      (select org_id from audit_events order by org_id limit 1)
      union all
      select (select a.org_id from audit_events a where a.org_id > orgs.org_id order by a.org_id limit 1)
        from orgs where orgs.org_id is not null
    )
    select o.org_id, h.seq, h.hash, h.key_id from orgs o
      cross join lateral (
        select seq, hash, key_id from audit_events e where e.org_id = o.org_id order by seq desc limit 1
      ) h
     where o.org_id is not null`);
  return (result as { rows: { org_id: string; seq: string; hash: string; key_id: string | null }[] }).rows;
}

/**
 * The next checkpoint after `previous`: each organisation's head now, provided its chain still
 * holds the previous head at the same seq with the same hash. One that does not (its newest
 * entries deleted, an entry rewritten, all its entries gone) keeps its previous head and is named in
 * `heldBack`: a checkpoint never moves back, so audit:verify names the damage however late it runs.
 */
export async function nextCheckpoint(
  knex: Knex,
  previous: AuditCheckpoint | null,
  now: Date,
): Promise<AuditCheckpoint> {
  if (previous && !checkpointHolds(previous))
    throw new Error(
      "the previous audit checkpoint is not keyed with this deployment's audit key: refusing to build on it",
    );
  const before = new Map((previous?.heads ?? []).map((h) => [h.orgId, h]));
  const stillThere = new Map<string, string>();
  if (before.size) {
    const orgs = [...before.keys()];
    const seqs = orgs.map((o) => before.get(o)!.seq);
    const found = await knex.raw(
      `select a.org_id, a.hash from audit_events a
         join unnest(?::uuid[], ?::bigint[]) as c(org_id, seq) on a.org_id = c.org_id and a.seq = c.seq`,
      [orgs, seqs],
    );
    for (const r of (found as { rows: { org_id: string; hash: string }[] }).rows) stillThere.set(r.org_id, r.hash);
  }
  const heads = new Map<string, AuditHead>();
  const heldBack: string[] = [];
  for (const [orgId, head] of before) {
    if (stillThere.get(orgId) === head.hash) continue;
    heads.set(orgId, head);
    heldBack.push(orgId);
  }
  const unkeyedFrom: string[] = [];
  for (const r of await currentHeads(knex)) {
    if (heads.has(r.org_id)) continue;
    const keyedFrom = before.get(r.org_id)?.keyedFrom ?? null;
    heads.set(r.org_id, { orgId: r.org_id, seq: String(r.seq), hash: r.hash, keyedFrom });
    if (keyedFrom === null && r.key_id !== null) unkeyedFrom.push(r.org_id);
  }
  // An organisation's first keyed entry, looked for once (its head is keyed), then carried.
  if (unkeyedFrom.length) {
    const firsts = await knex.raw(
      `select o.org_id, (select min(seq) from audit_events e where e.org_id = o.org_id and e.key_id is not null) as seq
         from unnest(?::uuid[]) as o(org_id)`,
      [unkeyedFrom],
    );
    for (const r of (firsts as { rows: { org_id: string; seq: string | null }[] }).rows)
      if (r.seq !== null) heads.get(r.org_id)!.keyedFrom = String(r.seq);
  }
  const unsigned: Unsigned = {
    takenAt: now.toISOString(),
    heads: [...heads.values()].sort((a, b) => (a.orgId < b.orgId ? -1 : a.orgId > b.orgId ? 1 : 0)),
    heldBack: heldBack.sort(),
  };
  const key = currentAuditKey();
  return { ...unsigned, keyId: key.id, mac: checkpointMac(unsigned, key) };
}
