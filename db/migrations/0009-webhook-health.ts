import { Migration } from '@mikro-orm/migrations';

/**
 * The previous signing secret kept for the rotation overlap, endpoint status (disabled
 * with reason and time, and since when it has failed every attempt), bulk recoveries with their
 * progress, and each event's writing transaction so the events API never pages past one that is
 * still uncommitted.
 */
export class Migration0009WebhookHealth extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table webhook_endpoints
        add column previous_secret_ciphertext text,
        add column previous_secret_expires_at timestamptz,
        add column status text not null default 'enabled' check (status in ('enabled', 'disabled')),
        add column disabled_reason text,
        add column disabled_at timestamptz,
        add column failing_since timestamptz`);
    // The success rate reads an endpoint's recent attempts through its recently attempted deliveries.
    this.addSql(
      'create index webhook_deliveries_endpoint_recent_idx on webhook_deliveries (endpoint_id, last_attempt_at)',
    );
    // Bulk recovery pages an endpoint's failed and exhausted deliveries oldest first.
    this.addSql(
      `create index webhook_deliveries_recovery_idx on webhook_deliveries (endpoint_id, created_at, id) where status in ('failed', 'exhausted')`,
    );
    this.addSql(`
      create table webhook_recoveries (
        id uuid primary key,
        org_id uuid not null,
        endpoint_id uuid not null references webhook_endpoints(id),
        since timestamptz not null,
        until timestamptz not null,
        status text not null default 'running' check (status in ('running', 'completed', 'cancelled')),
        total integer not null,
        done integer not null default 0,
        skipped integer not null default 0,
        cursor_created_at timestamptz,
        cursor_id uuid,
        cancel_requested_at timestamptz,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        finished_at timestamptz
      )`);
    this.addSql(
      `create unique index webhook_recoveries_one_running_idx on webhook_recoveries (endpoint_id) where status = 'running'`,
    );
    // Rows written before this migration have no transaction id and count as long committed.
    this.addSql('alter table events add column txid xid8 default pg_current_xact_id()');
    this.addSql('create index events_org_seq_idx on events (org_id, seq)');
  }
}
