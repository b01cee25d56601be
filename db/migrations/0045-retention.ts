import { Migration } from '@mikro-orm/migrations';

/**
 * Retention: the prune deletes processor notifications oldest first, a batch at a time;
 * without this index each batch would read the whole table to find the oldest. The other pruned
 * tables are walked by indexes they already have (events by `seq`, deliveries by event, attempts
 * by delivery, idempotency keys by `expires_at`).
 */
export class Migration0045Retention extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index payment_notifications_received_at_idx on payment_notifications (received_at)');
  }
}
