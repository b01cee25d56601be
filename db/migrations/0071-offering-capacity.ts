import { Migration } from '@mikro-orm/migrations';

/**
 * Offering capacity (docs/decisions/0278-offering-capacity-reservations.md): an offering or a
 * security class may set a maximum raise and a minimum investment; each subscription holds a
 * commitment of its total from creation until it is cancelled, rejected or voided, and the
 * committed counters are the sum of the commitments still held. Existing subscriptions are
 * counted as they stand, so a maximum set later is measured against what is already committed.
 */
export class Migration0071OfferingCapacity extends Migration {
  override async up(): Promise<void> {
    for (const table of ['offerings', 'security_classes']) {
      this.addSql(`alter table ${table} add column max_amount numeric(39,4)`);
      this.addSql(`alter table ${table} add column min_investment numeric(19,4)`);
      this.addSql(`alter table ${table} add column committed_amount numeric(39,4) not null default 0`);
    }
    this.addSql(`create table offering_commitments (
      subscription_id uuid primary key,
      offering_id uuid not null,
      security_class_id uuid not null,
      amount numeric(19,4) not null,
      created_at timestamptz not null default now(),
      released_at timestamptz
    )`);
    this.addSql('create index offering_commitments_offering_idx on offering_commitments (offering_id)');
    this
      .addSql(`insert into offering_commitments (subscription_id, offering_id, security_class_id, amount, created_at, released_at)
      select id, offering_id, (state->>'securityClassId')::uuid, (state->>'totalAmount')::numeric, created_at,
             case when status in ('cancelled', 'rejected', 'voided') then now() end
        from subscriptions`);
    this.addSql(`update offerings o set committed_amount = coalesce(
      (select sum(c.amount) from offering_commitments c where c.offering_id = o.id and c.released_at is null), 0)`);
    this.addSql(`update security_classes k set committed_amount = coalesce(
      (select sum(c.amount) from offering_commitments c where c.security_class_id = k.id and c.released_at is null), 0)`);
  }
}
