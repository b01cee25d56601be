import { randomUUID } from 'node:crypto';
import { actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { asSuperuser, auditedOrg, auditVerify, checkpointNow, recomputePlainFrom } from './support/audit-tamper';

/**
 * An audit trail its database cannot rewrite (docs/decisions/0265-0267): the services' role may
 * only append and read it; and whatever the test stack's PostgreSQL superuser does to the table
 * (triggers off for its session), `npm run -s audit:verify` names the first entry that does not
 * hold: a chain changed and recomputed, a deleted tail, an organisation whose entries are all gone.
 */
describe('the audit trail against its own database', () => {
  let svc: TestService;

  beforeAll(async () => {
    svc = await startService({ set: 'A', auditCheckpoints: true });
    await checkpointNow(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  const asService = (statement: string, bindings: unknown[] = []) =>
    svc.orm.em.getConnection().execute(statement, bindings);

  it('lets the services append and read entries, and refuses them every other change', async () => {
    const org = await auditedOrg(svc, 2);
    const [role] = await asService(
      `select rolsuper, pg_has_role(current_user, (select relowner from pg_class where oid = 'audit_events'::regclass), 'USAGE') as owner
         from pg_roles where rolname = current_user`,
    );
    expect(role).toEqual({ rolsuper: false, owner: false });
    expect(await asService(`select seq from audit_events where org_id = ? order by seq`, [org])).toEqual([
      { seq: '1' },
      { seq: '2' },
    ]);
    for (const statement of [
      `update audit_events set after = '{}' where org_id = '${org}'`,
      `delete from audit_events where org_id = '${org}'`,
      `truncate audit_events`,
    ])
      await expect(asService(statement)).rejects.toThrow(/permission denied for table audit_events/);
    await expect(asService(`alter table audit_events disable trigger audit_events_append_only`)).rejects.toThrow(
      /must be owner of table audit_events/,
    );
    await expect(asService(`set session_replication_role = replica`)).rejects.toThrow(/permission denied/);
    expect(await asService(`select count(*)::int as n from audit_events where org_id = ?`, [org])).toEqual([{ n: 2 }]);
    expect(await auditVerify(svc, org)).toMatchObject({
      code: 0,
      stderr: '',
      stdout: expect.stringContaining('2 entries, chain holds'),
    });
  });

  it('names the changed entry of a chain the superuser recomputed with plain hashes', async () => {
    const org = await auditedOrg(svc, 5);
    expect((await checkpointNow(svc)).heads).toContainEqual(expect.objectContaining({ orgId: org, seq: '5' }));
    const victim = await asSuperuser(svc, async (db) => {
      const { rows } = await db.query(`select id from audit_events where org_id = $1 and seq = 3`, [org]);
      await db.query(`update audit_events set after = '{"name":"someone else"}' where id = $1`, [rows[0].id]);
      await recomputePlainFrom(db, org, 3);
      return rows[0].id as string;
    });
    const verdict = await auditVerify(svc, org);
    expect(verdict.code).toBe(1);
    expect(verdict.stderr).toContain(
      `broken at entry 3 (id ${victim}): not keyed, though the chain is keyed from entry 1`,
    );
  });

  it('names the first entry of a whole chain recomputed as if it were written before keys', async () => {
    const org = await auditedOrg(svc, 3);
    await checkpointNow(svc);
    await asSuperuser(svc, (db) => recomputePlainFrom(db, org, 1));
    const verdict = await auditVerify(svc, org);
    expect(verdict.code).toBe(1);
    // Every link holds and every plain hash matches: only the checkpoint (keyed from entry 1) tells.
    expect(verdict.stderr).toMatch(
      /broken at entry 1 \(id [0-9a-f-]+\): not keyed, though the chain is keyed from entry 1/,
    );
  });

  it('verifies entries from before keys by their plain hash, and the keyed chain that goes on from them', async () => {
    // Two entries as migration 0064 found them: no key id, plain SHA-256 links.
    const org = randomUUID();
    await asSuperuser(svc, async (db) => {
      for (const seq of [1, 2])
        await db.query(
          `insert into audit_events (id, org_id, seq, occurred_at, actor_user_id, actor_roles, action, subject_type,
             subject_id, outcome, prev_hash, hash)
           values ($1, $2, $3, now(), 'before-keys', '{admin}', 'api_key.issue', 'api_key', $4, 'succeeded', '', '')`,
          [randomUUID(), org, seq, `legacy-${seq}`],
        );
      await recomputePlainFrom(db, org, 1);
    });
    const admin = await actor(svc, org, ['admin']);
    for (const name of ['keyed-3', 'keyed-4'])
      expect((await http(svc.baseUrl).post('/identity/api-keys', admin.token, { name })).status).toBe(201);
    const keyed = await asService(`select key_id from audit_events where org_id = ? order by seq`, [org]);
    expect(keyed.map((r) => r.key_id)).toEqual([null, null, 'dev', 'dev']);
    expect((await checkpointNow(svc)).heads).toContainEqual({
      orgId: org,
      seq: '4',
      hash: expect.any(String),
      keyedFrom: '3',
    });
    expect(await auditVerify(svc, org)).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('4 entries, chain holds'),
    });
    // Past the first keyed entry, an entry turned back into a plain one is named.
    await asSuperuser(svc, (db) => recomputePlainFrom(db, org, 4));
    const verdict = await auditVerify(svc, org);
    expect(verdict.code).toBe(1);
    expect(verdict.stderr).toMatch(
      /broken at entry 4 \(id [0-9a-f-]+\): not keyed, though the chain is keyed from entry 3/,
    );
  });

  it('names a deleted tail against the checkpoint, and later checkpoints do not forget it', async () => {
    const org = await auditedOrg(svc, 4);
    await checkpointNow(svc);
    await asSuperuser(svc, (db) => db.query(`delete from audit_events where org_id = $1 and seq >= 3`, [org]));
    const after = await checkpointNow(svc);
    expect(after.heads).toContainEqual(expect.objectContaining({ orgId: org, seq: '4' }));
    expect(after.heldBack).toContain(org);
    const verdict = await auditVerify(svc, org);
    expect(verdict.code).toBe(1);
    expect(verdict.stderr).toContain(
      `broken at entry 3: entry missing: the checkpoint of ${after.takenAt} holds entries up to 4`,
    );
    expect(verdict.stderr).toContain('2 entries before it hold');
  });

  it('names an organisation whose entries were all deleted', async () => {
    const org = await auditedOrg(svc, 2);
    await checkpointNow(svc);
    await asSuperuser(svc, (db) => db.query(`delete from audit_events where org_id = $1`, [org]));
    await checkpointNow(svc);
    const verdict = await auditVerify(svc, org);
    expect(verdict.code).toBe(1);
    expect(verdict.stderr).toMatch(/broken at entry 1: entry missing: the checkpoint of \S+ holds entries up to 2/);
    // An organisation that never had an entry is not in any checkpoint, and has nothing to hold.
    expect((await auditVerify(svc, randomUUID())).stdout).toContain('0 entries, chain holds');
  });
});
