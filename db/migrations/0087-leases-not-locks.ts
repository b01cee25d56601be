import { Migration } from '@mikro-orm/migrations';

/**
 * docs/decisions/0332-leases-not-locks.md: the rows a worker takes for a call to Temporal (a queued
 * delivery's workflow start, a retry or ordered hand-over's signal, a deleted endpoint's page of
 * signals) are leased by a committed statement, not held by a row lock across the call.
 */
export class Migration0087LeasesNotLocks extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table webhook_queue add column leased_until timestamptz');
    this.addSql('alter table webhook_schedule_handovers add column leased_until timestamptz');
    this.addSql('alter table webhook_endpoint_cleanups add column leased_until timestamptz');
  }
}
