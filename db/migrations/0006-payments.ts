import { Migration } from '@mikro-orm/migrations';

/**
 * Payments (spec §2.3–§2.5, §3): the processor notifications already taken (idempotency by the
 * processor's event id), the references that tie a processor object to a subscription, and the
 * built-in sandbox processor's own sessions, collections and outgoing notifications.
 */
export class Migration0006Payments extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table payment_notifications (
        processor text not null,
        event_id text not null,
        event_type text not null,
        subscription_id uuid,
        outcome text not null,
        received_at timestamptz not null default now(),
        primary key (processor, event_id)
      )`);
    this.addSql(`
      create table payment_references (
        processor text not null,
        reference text not null,
        subscription_id uuid not null,
        created_at timestamptz not null default now(),
        primary key (processor, reference)
      )`);
    this.addSql(`
      create table payment_sandbox_sessions (
        id uuid primary key,
        mode text not null check (mode in ('setup', 'payment')),
        subscription_id uuid not null,
        investor_id text not null,
        method text not null,
        amount_cents bigint,
        currency text not null,
        success_url text not null,
        cancel_url text not null,
        status text not null,
        payment_method_ref text,
        created_at timestamptz not null default now(),
        expires_at timestamptz not null,
        completed_at timestamptz
      )`);
    this.addSql('create index payment_sandbox_sessions_subscription on payment_sandbox_sessions (subscription_id)');
    this.addSql(`
      create table payment_sandbox_collections (
        id uuid primary key,
        idempotency_key text not null unique,
        subscription_id uuid not null,
        setup_session_id uuid not null references payment_sandbox_sessions (id),
        amount_cents bigint not null,
        currency text not null,
        status text not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`);
    this.addSql(
      'create index payment_sandbox_collections_subscription on payment_sandbox_collections (subscription_id)',
    );
    this.addSql(`
      create table payment_sandbox_events (
        id text primary key,
        type text not null,
        body text not null,
        created_at timestamptz not null default now(),
        attempts integer not null default 0,
        delivered_at timestamptz,
        last_error text
      )`);
    this.addSql(
      'create index payment_sandbox_events_undelivered on payment_sandbox_events (created_at) where delivered_at is null',
    );
  }
}
