import { Migration } from '@mikro-orm/migrations';

/**
 * Every hold has an owner and an end (docs/decisions/0370-per-investor-cap.md,
 * docs/decisions/0371-commitment-sweep.md): an offering may cap what one investor's live
 * subscriptions hold (`max_per_investor`), so each commitment names its investor; and a commitment
 * says why it was given back (`ended`: its subscription was cancelled, rejected or voided;
 * `never_started`: its workflow never started), since only the second is taken again by a retried
 * create or a workflow that started after all. Commitments released before this column existed
 * count as ended when their subscription is recorded, else as never started.
 */
export class Migration0091HoldsWithOwnersAndEnds extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table offerings add column max_per_investor numeric(19,4)');
    this.addSql('alter table offering_commitments add column investor_id text');
    this.addSql(
      `alter table offering_commitments add column released_because text
         check (released_because in ('ended', 'never_started'))`,
    );
    this.addSql(`update offering_commitments c set investor_id = s.investor_id
      from subscriptions s where s.id = c.subscription_id`);
    this.addSql(`update offering_commitments c set released_because = case
        when exists (select 1 from subscriptions s where s.id = c.subscription_id) then 'ended' else 'never_started' end
      where released_at is not null`);
    // What one investor holds in an offering, summed inside the hold (db/offering-capacity.ts).
    this.addSql(`create index offering_commitments_investor_idx on offering_commitments (offering_id, investor_id)
      where released_at is null`);
    // The sweep's scan: unreleased commitments, oldest first.
    this.addSql(`create index offering_commitments_unreleased_idx on offering_commitments (created_at)
      where released_at is null`);
    // The sweep's other scan: unsigned subscriptions past their lifetime (docs/decisions/0368-unsigned-drafts-expire.md).
    this.addSql(`create index subscriptions_unsigned_idx on subscriptions (created_at)
      where status in ('draft', 'pending_signature')`);
  }
}
