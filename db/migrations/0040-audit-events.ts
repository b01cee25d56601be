import { Migration } from '@mikro-orm/migrations';

/**
 * The audit trail (docs/decisions/README.md, Operating for years). One row per security- or money-relevant
 * action, written in the transaction of the change it records (db/audit-log.ts). Each
 * organisation's rows form a hash chain by `seq`; a trigger refuses every UPDATE, DELETE and
 * TRUNCATE, since the app's database user owns its tables and a REVOKE would not bind it.
 */
export class Migration0040AuditEvents extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table audit_events (
        id uuid primary key,
        org_id uuid not null,
        seq bigint not null,
        occurred_at timestamptz not null,
        actor_user_id text,
        actor_roles text[] not null default '{}',
        actor_api_key_id uuid,
        actor_session text,
        action text not null,
        subject_type text not null,
        subject_id text not null,
        outcome text not null check (outcome in ('succeeded', 'refused')),
        error_code text,
        client_address text,
        request_id text,
        before jsonb,
        after jsonb,
        prev_hash text not null,
        hash text not null,
        unique (org_id, seq)
      )`);
    this.addSql('create index audit_events_org_time_idx on audit_events (org_id, occurred_at desc, id desc)');
    this.addSql(`
      create function audit_events_append_only() returns trigger language plpgsql as $$
      begin
        raise exception 'audit_events is append-only (% refused)', tg_op using errcode = 'insufficient_privilege';
      end $$`);
    this.addSql(`create trigger audit_events_append_only before update or delete on audit_events
      for each row execute function audit_events_append_only()`);
    this.addSql(`create trigger audit_events_no_truncate before truncate on audit_events
      for each statement execute function audit_events_append_only()`);
  }
}
