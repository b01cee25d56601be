import { Migration } from '@mikro-orm/migrations';

/**
 * Replay missing (docs/decisions/0396-replay-missing.md): a recovery's mode, and where its first phase (the
 * events the endpoint subscribes to but has no delivery of, planned in publication order) stands: the last
 * event's `seq` planned, and when the phase ended. Additive: a previous release reads none of it, and its
 * recoveries are `failed`, today's behaviour.
 */
export class Migration0098RecoveryMissing extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table webhook_recoveries
        add column mode text not null default 'failed' check (mode in ('failed', 'missing')),
        add column missing_cursor_seq bigint,
        add column missing_finished_at timestamptz`);
  }
}
