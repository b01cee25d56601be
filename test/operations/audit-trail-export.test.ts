import { execFile } from 'node:child_process';
import { Client as PgClient } from 'pg';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { appendAuditEvent, GENESIS_HASH, verifyAuditChain } from '../../db/audit-log';
import { actor, consoleToken, newOrg, type Actor } from '../support/fixtures';
import { ownerUrlOf, type TestService } from '../support/service';
import type { LifecycleWorld } from '../support/subscriptions';
import { auditTrailKit, startAuditStack } from './support/audit-trail';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/**
 * The audit trail (docs/decisions/0204-audit-one-table-one-chain-per-organisation.md; the hash chain, and
 * the trail served through the API, as CSV and on a console page): every audited action, once in each
 * behaviour set, leaves exactly one entry with its actor and outcome; a refusal is recorded as refused. The
 * other subjects are in the audit-trail-*.test.ts files beside this one.
 */
describe.each(['A', 'B'] as const)('Set %s: the audit trail of the chain and its readers', (set) => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    ({ svc, w } = await startAuditStack(set));
  }, 120_000);
  afterAll(() => svc?.stop());

  const { sql, hooks, entries, expectOk } = auditTrailKit(set, () => ({ svc, w }));

  it('chains entries written at the same time by concurrent requests', async () => {
    const admin = await actor(svc, newOrg(), ['admin']);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => w.api.post('/identity/api-keys', admin.token, { name: `burst-${i}` })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(201));
    const rows = await entries({ org: admin.orgId });
    expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 12 }, (_, i) => String(i + 1)));
    expect(await verifyAuditChain(sql().getKnex(), admin.orgId)).toEqual({ ok: true, checked: 12 });
  });

  it('leaves no entry for a change that rolled back, and the chain goes on without a gap', async () => {
    const org = newOrg();
    const before = await entries({ org });
    await expect(
      svc.orm.em.fork().transactional(async (em) => {
        await appendAuditEvent(em.getTransactionContext()!, {
          orgId: org,
          actor: { userId: 'u', roles: ['admin'], apiKeyId: null, session: null, clientAddress: null, requestId: null },
          action: 'api_key.issue',
          subject: { type: 'api_key', id: 'rolled-back' },
          result: { outcome: 'succeeded' },
        });
        throw new Error('the change failed after its entry was written');
      }),
    ).rejects.toThrow('the change failed');
    expect(await entries({ org })).toEqual(before);
    expect(before).toEqual([]);
    // The next entry that commits is the chain's first: nothing of the rolled-back one is left to link to.
    const next = await appendAuditEvent(sql().getKnex(), {
      orgId: org,
      actor: { userId: 'u', roles: ['admin'], apiKeyId: null, session: null, clientAddress: null, requestId: null },
      action: 'api_key.issue',
      subject: { type: 'api_key', id: 'committed' },
      result: { outcome: 'succeeded' },
    });
    expect([next.seq, next.prev_hash]).toEqual(['1', GENESIS_HASH]);
    expect(await verifyAuditChain(sql().getKnex(), org)).toEqual({ ok: true, checked: 1 });
  });

  it('serves the trail to admins only, scoped to their organisation, filtered and cursor-paged, and as CSV', async () => {
    // This organisation's trail: an endpoint created and changed six times, a refused decision, an API key.
    const ep = expectOk(
      await w.api.post(hooks(), w.staff.token, { url: 'http://127.0.0.1:9/x', eventTypes: ['*'] }),
      201,
    );
    for (let n = 1; n <= 6; n++)
      expectOk(await w.api.patch(`${hooks()}/${ep.id}`, w.staff.token, { description: `change ${n}` }));
    expect((await w.post((await w.create()).id, 'approve', w.staff)).status).toBe(409);
    expectOk(await w.api.post('/identity/api-keys', w.admin.token, { name: 'trail' }), 201);

    expect((await w.api.get('/audit/events', w.staff.token)).status).toBe(403);
    const stranger = await actor(svc, newOrg(), ['admin']);
    expect(expectOk(await w.api.get('/audit/events', stranger.token)).items).toEqual([]);

    const all = (await entries()).reverse();
    const first = expectOk(await w.api.get('/audit/events?limit=2', w.admin.token));
    expect(first.items.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));
    const next = expectOk(await w.api.get(`/audit/events?limit=2&cursor=${first.next_cursor}`, w.admin.token));
    expect(next.items.map((e: { id: string }) => e.id)).toEqual(all.slice(2, 4).map((e) => e.id));
    expect((await w.api.get('/audit/events?cursor=nonsense', w.admin.token)).status).toBe(400);

    const byAction = expectOk(await w.api.get('/audit/events?action=webhook_endpoint.*', w.admin.token)).items;
    expect(byAction.length).toBeGreaterThanOrEqual(7);
    expect(byAction.every((e: { action: string }) => e.action.startsWith('webhook_endpoint.'))).toBe(true);
    const byActor = expectOk(await w.api.get(`/audit/events?actor=${w.admin.userId}`, w.admin.token)).items;
    expect(byActor.length).toBeGreaterThan(0);
    expect(byActor.every((e: { actor: { user_id: string } }) => e.actor.user_id === w.admin.userId)).toBe(true);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(expectOk(await w.api.get(`/audit/events?from=${future}`, w.admin.token)).items).toEqual([]);
    const refused = expectOk(await w.api.get('/audit/events?outcome=refused&limit=200', w.admin.token)).items;
    expect(refused.map((e: { error_code: string }) => e.error_code)).toContain('INVALID_TRANSITION');

    const csv = await fetch(`${svc.baseUrl}/audit/events.csv?action=api_key.*`, {
      headers: { authorization: `Bearer ${w.admin.token}` },
    });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toMatch(/^seq,occurred_at,actor_user_id,/);
    expect(lines.slice(1).every((l) => l.includes(',api_key.'))).toBe(true);
    expect(lines).toHaveLength(1 + (await entries()).filter((e) => e.action.startsWith('api_key.')).length);
  });

  it('shows the trail on a console page to admins, filtered and paged, and the refusal to other staff', async () => {
    const page = async (who: Actor, query = '') => {
      const res = await fetch(`${svc.baseUrl}/console/audit${query}`, {
        headers: { cookie: `tranche_console=${await consoleToken(svc, who, who === w.admin ? ['admin'] : ['staff'])}` },
        redirect: 'manual',
        signal: AbortSignal.timeout(30_000),
      });
      return { status: res.status, text: await res.text() };
    };
    // More than a page (50) of entries, so the page links to older ones.
    for (let n = (await entries()).length; n <= 50; n += 1)
      expectOk(await w.api.post('/identity/api-keys', w.admin.token, { name: `page-${n}` }), 201);
    const keys = (await entries()).filter((e) => e.action.startsWith('api_key.')).slice(-50);
    const shown = await page(w.admin, '?action=api_key.*');
    expect(shown.status).toBe(200);
    for (const e of keys) expect(shown.text).toContain(`data-testid="audit-${e.id}"`);
    expect(shown.text).not.toContain('webhook_endpoint.');
    const older = /href="\/console\/audit\?([^"]+)" data-testid="next"/.exec((await page(w.admin)).text);
    expect(older?.[1]).toContain('cursor=');
    expect((await page(w.admin, `?${older![1]!.replaceAll('&amp;', '&')}`)).text).toContain(
      'data-testid="audit-events"',
    );
    const staff = await page(w.staff);
    expect(staff.text).toContain('ROLE_REQUIRED');
    expect(staff.text).not.toContain('data-testid="audit-events"');
  });

  it('verifies the chain, refuses edits, and names the first entry an edit broke', async () => {
    const verify = (org: string) =>
      run('npm', ['run', '-s', 'audit:verify', '--', '--org', org], {
        cwd: root,
        env: {
          ...process.env,
          DATABASE_URL: svc.config.DATABASE_URL,
          TEMPORAL_TASK_QUEUE: svc.config.TEMPORAL_TASK_QUEUE,
          LOG_LEVEL: 'silent',
        },
        timeout: 60_000,
      });
    for (const name of ['chain-1', 'chain-2', 'chain-3'])
      expectOk(await w.api.post('/identity/api-keys', w.admin.token, { name }), 201);
    const rows = await entries();
    expect(await verifyAuditChain(sql().getKnex(), w.org)).toEqual({ ok: true, checked: rows.length });
    expect((await verify(w.org)).stdout).toContain(`${rows.length} entries, chain holds`);

    const victim = rows[Math.floor(rows.length / 2)]!;
    // The services' role may not change an entry at all; the owner meets the trigger.
    await expect(sql().execute(`update audit_events set after = null where id = ?`, [victim.id])).rejects.toThrow(
      /permission denied/,
    );
    const owner = new PgClient({ connectionString: ownerUrlOf(svc.config.DATABASE_URL) });
    await owner.connect();
    try {
      await expect(owner.query(`delete from audit_events where id = $1`, [victim.id])).rejects.toThrow(/append-only/);
      // Someone with the table owner's rights edits a row behind the trigger's back.
      await owner.query(`alter table audit_events disable trigger audit_events_append_only`);
      await owner.query(`update audit_events set after = '{"status":"tampered"}' where id = $1`, [victim.id]);
      await owner.query(`alter table audit_events enable trigger audit_events_append_only`);
    } finally {
      await owner.end();
    }
    const failed = await verify(w.org).then(
      () => null,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(`broken at entry ${victim.seq} (id ${victim.id})`);
  });
});
