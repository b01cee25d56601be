import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks (spec §4.3, §6): endpoints with their encrypted signing secret, one delivery per
 * (event, endpoint) with its attempts, the §6.3 body stored once per event, and the endpoint a
 * test.ping is aimed at.
 */
export class Migration0005Webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table webhook_endpoints (
        id uuid primary key,
        org_id uuid not null,
        url text not null,
        description text not null,
        event_types text[] not null,
        secret_ciphertext text not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        deleted_at timestamptz
      )`);
    this.addSql(
      'create index webhook_endpoints_org_idx on webhook_endpoints (org_id, created_at desc, id) where deleted_at is null',
    );
    // The exact bytes every attempt of every delivery of the event sends (spec §6.3); history holds only ids.
    this.addSql(`
      create table webhook_event_bodies (
        event_id uuid primary key,
        body text not null
      )`);
    // A test.ping goes to one endpoint only; other events go to every matching endpoint.
    this.addSql(`
      create table webhook_event_targets (
        event_id uuid not null,
        endpoint_id uuid not null,
        primary key (event_id, endpoint_id)
      )`);
    this.addSql(`
      create table webhook_deliveries (
        id uuid primary key,
        event_id uuid not null,
        endpoint_id uuid not null references webhook_endpoints(id),
        org_id uuid not null,
        event_type text not null,
        status text not null default 'pending' check (status in ('pending', 'success', 'failed', 'exhausted')),
        attempt_count integer not null default 0,
        last_attempt_at timestamptz,
        next_attempt_at timestamptz,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        unique (event_id, endpoint_id)
      )`);
    this.addSql('create index webhook_deliveries_org_idx on webhook_deliveries (org_id, created_at desc, id desc)');
    this.addSql('create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, status)');
    this.addSql(`
      create table webhook_attempts (
        delivery_id uuid not null references webhook_deliveries(id),
        number integer not null check (number > 0),
        attempted_at timestamptz not null,
        duration_ms integer not null,
        response_status integer,
        response_body text,
        error text,
        primary key (delivery_id, number)
      )`);
  }
}
