import { Migration } from '@mikro-orm/migrations';

/**
 * docs/decisions/0309-slots-taken-at-the-post.md: a dispatch round's window of endpoints is shared
 * out by organisation, so the round's scan of the queue walks the organisations with queued
 * deliveries, then each one's endpoints (a loose index scan on both), on this index.
 */
export class Migration0086QueueByOrganisation extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index webhook_queue_org_idx on webhook_queue (org_id, endpoint_id) where ordered_key is null');
  }
}
