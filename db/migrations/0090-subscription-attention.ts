import { Migration } from '@mikro-orm/migrations';

/**
 * docs/decisions/0366-subscriptions-needing-attention.md: a subscription whose last step failed, for
 * good or again and again, with the step and the failure; cleared when the next change is recorded
 * (db/subscription-attention.ts). Listed per organisation, most recently failed first.
 */
export class Migration0090SubscriptionAttention extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table subscription_attention (
      subscription_id uuid primary key,
      org_id uuid not null,
      step text not null,
      failure text not null,
      sqlstate text,
      constraint_name text,
      failed_attempts integer not null,
      first_failed_at timestamptz not null,
      last_failed_at timestamptz not null
    )`);
    this.addSql(
      'create index subscription_attention_by_org on subscription_attention (org_id, last_failed_at desc, subscription_id desc)',
    );
  }
}
