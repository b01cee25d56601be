import { Migration } from '@mikro-orm/migrations';

/** The outbox: every event of the service is stored once, by event_id, with the change that caused it. */
export class Migration0002Events extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table events (
        id uuid primary key,
        -- Publication order: events written in one transaction keep the order they were appended in.
        seq bigint generated always as identity unique,
        org_id uuid not null,
        type text not null,
        source text not null,
        data jsonb not null,
        occurred_at timestamptz not null,
        created_at timestamptz not null default now(),
        dispatched_at timestamptz
      )`);
    this.addSql('create index events_undispatched_idx on events (created_at) where dispatched_at is null');
    this.addSql('create index events_org_type_idx on events (org_id, type, occurred_at desc)');
  }
}
