import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { findingsOf, migrationFindings } from '../../scripts/lib/migration-rules';

/**
 * Migrations are additive for one release (docs/decisions/0389-migrations-expand-then-contract.md): the
 * previous release runs against the migrated schema while a release rolls out.
 */
describe('the expand-then-contract check on migrations', () => {
  const kinds = (sql: string) => findingsOf(sql).map((f) => `${f.kind} ${f.name}`);

  it('finds what takes away or tightens what the previous release reads or writes', () => {
    expect(kinds('alter table webhook_queue drop column leased_until')).toEqual(['drops leased_until']);
    expect(kinds('ALTER TABLE ONLY "events" DROP COLUMN IF EXISTS "data"')).toEqual(['drops data']);
    expect(kinds('drop table if exists public.payment_notifications')).toEqual(['drops payment_notifications']);
    expect(kinds('alter table subscriptions rename column state to projection')).toEqual(['renames state']);
    expect(kinds('alter table subscriptions rename to subs')).toEqual(['renames subscriptions']);
    expect(kinds('alter table offerings alter column raised_amount type numeric(39,4)')).toEqual([
      'retypes raised_amount',
    ]);
    expect(kinds('alter table events alter column org_id set not null')).toEqual(['requires org_id']);
    expect(kinds('alter table events add column region text not null')).toEqual(['requires region']);
    expect(kinds("alter table events add constraint events_region check (region <> '')")).toEqual([
      "tightens events: add constraint events_region check (region <> '')",
    ]);
    expect(kinds('create unique index events_one on events (org_id, type)')).toEqual([
      'tightens events: create unique index events_one on events (org_id, type)',
    ]);
    expect(kinds('alter table a drop column x, add column y int not null, alter column z type bigint')).toEqual([
      'drops x',
      'requires y',
      'retypes z',
    ]);
  });

  it('leaves additions, loosenings and a new table of its own alone', () => {
    for (const sql of [
      'alter table webhook_queue add column leased_until timestamptz',
      "alter table events add column region text not null default 'eu'",
      'alter table webhook_attempts alter column duration_ms drop not null',
      'alter table webhook_endpoints drop constraint webhook_endpoints_url_check',
      'drop index if exists webhook_deliveries_pending_idx',
      'create index events_org_idx on events (org_id)',
      'create table refunds (id uuid primary key, amount numeric(19,4) not null)',
    ])
      expect(kinds(sql)).toEqual([]);
    const own = ['create table refunds (id uuid primary key)', 'alter table refunds add constraint r check (true)'];
    expect(migrationFindings(own, '', () => true)).toEqual([]);
  });

  it('lets a contract migration drop only what the previous release no longer names', () => {
    const drop = ['alter table webhook_queue drop column leased_until'];
    const said = '// contract: leased_until, unread since the release before';
    expect(migrationFindings(drop, '', () => false)[0]!.why).toMatch(/no "contract: leased_until" says it may/);
    expect(migrationFindings(drop, said, () => true)[0]!.why).toMatch(/still names leased_until/);
    expect(migrationFindings(drop, said, () => false)).toEqual([]);
  });

  it('passes every migration added since the previous release (npm run -s lint:migrations)', () => {
    const out = execFileSync('npx', ['tsx', join(__dirname, '..', '..', 'scripts', 'check-migrations.ts')], {
      encoding: 'utf8',
    });
    expect(out).toMatch(/added since the previous release \([0-9a-f]{12}\), each additive/);
  });
});
