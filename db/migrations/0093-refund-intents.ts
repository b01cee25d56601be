import { Migration } from '@mikro-orm/migrations';

/**
 * Refund intents (docs/decisions/0374-refund-intents.md): each processor refund a staff refund asks for
 * is a row before the processor is called (`requested`) and holds its outcome after (`succeeded` with the
 * processor's refund id, or `failed`), so no refund can leave the processor without a record here. The
 * amount is an integer of the currency's minor units; the processor key is the one the call is made
 * under, so a retried call and its row name the same refund.
 */
export class Migration0093RefundIntents extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table refund_intents (
        id uuid primary key,
        org_id uuid not null,
        subscription_id uuid not null,
        payment text not null,
        amount_minor bigint not null check (amount_minor > 0),
        currency text not null check (currency ~ '^[A-Z]{3}$'),
        processor_key text not null unique,
        request_key text,
        requested_by text not null,
        reason text not null,
        status text not null default 'requested' check (status in ('requested', 'succeeded', 'failed')),
        processor_refund_id text,
        failure text,
        requested_at timestamptz not null default now(),
        settled_at timestamptz,
        check ((status = 'succeeded') = (processor_refund_id is not null)),
        check ((status = 'requested') = (settled_at is null))
      )`);
    this.addSql('create index refund_intents_subscription on refund_intents (subscription_id, requested_at, id)');
  }
}
