import { Migration } from '@mikro-orm/migrations';

/**
 * An attempt is recorded before its POST (docs/decisions/0151-attempt-recorded-before-post.md): the row
 * exists from the start with no duration, and names its owner (the batch or delivery workflow run making it),
 * so a replay after a crash finds its own attempt instead of making, or overwriting, another.
 */
export class Migration0008AttemptClaims extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table webhook_attempts alter column duration_ms drop not null');
    this.addSql('alter table webhook_attempts add column owner text');
    // The relay's stuck-delivery sweep looks only at pending deliveries, oldest first.
    this.addSql(
      "create index webhook_deliveries_pending_idx on webhook_deliveries (created_at) where status = 'pending'",
    );
  }
}
