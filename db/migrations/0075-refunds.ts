import { Migration } from '@mikro-orm/migrations';

/**
 * Refunds (docs/decisions/0284-refunds.md): the sandbox processor refunds part of a payment, so a
 * paid session or collection keeps what went back of it, and each refund is recorded once under
 * its idempotency key (a retried activity finds the first). A constant default: no table rewrite.
 */
export class Migration0075Refunds extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table payment_sandbox_sessions add column refunded_cents bigint not null default 0');
    this.addSql('alter table payment_sandbox_collections add column refunded_cents bigint not null default 0');
    this.addSql(`
      create table payment_sandbox_refunds (
        id uuid primary key,
        idempotency_key text not null unique,
        reference uuid not null,
        subscription_id uuid not null,
        amount_cents bigint not null check (amount_cents > 0),
        created_at timestamptz not null default now()
      )`);
  }
}
