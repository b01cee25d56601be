import { Migration } from '@mikro-orm/migrations';

export class Migration0001Issuance extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table offerings (
        id uuid primary key,
        org_id uuid not null,
        name text not null,
        currency char(3) not null,
        status text not null check (status in ('open', 'closed')),
        raised_amount numeric(18,2) not null default 0,
        investor_count integer not null default 0,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    this.addSql('create index offerings_org_id_idx on offerings (org_id, created_at desc)');
    this.addSql(`
      create table security_classes (
        id uuid primary key,
        offering_id uuid not null references offerings(id),
        name text not null,
        price_per_unit numeric(18,2) not null check (price_per_unit > 0),
        created_at timestamptz not null
      )`);
    this.addSql('create index security_classes_offering_id_idx on security_classes (offering_id)');
    this.addSql(`
      create table tranches (
        id uuid primary key,
        offering_id uuid not null references offerings(id),
        name text not null,
        price_per_unit numeric(18,2) check (price_per_unit > 0),
        status text not null check (status in ('open', 'closed')),
        created_at timestamptz not null
      )`);
    this.addSql('create index tranches_offering_id_idx on tranches (offering_id)');
    this.addSql(`
      create table subscriptions (
        id uuid primary key,
        org_id uuid not null,
        offering_id uuid not null,
        investor_id text not null,
        status text not null,
        payment_status text not null,
        reference_code text unique,
        idempotency_key text,
        request_hash text,
        state jsonb not null,
        version integer not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    this.addSql('create index subscriptions_investor_idx on subscriptions (org_id, investor_id, created_at desc, id)');
    this.addSql('create index subscriptions_offering_idx on subscriptions (offering_id, status)');
    this.addSql('create unique index subscriptions_idempotency_idx on subscriptions (investor_id, idempotency_key)');
    // Set A: one credit per subscription whose funds reached escrow, so counters move exactly once.
    this.addSql(`
      create table offering_credits (
        subscription_id uuid primary key,
        offering_id uuid not null references offerings(id),
        investor_id text not null,
        amount numeric(18,2) not null,
        created_at timestamptz not null default now()
      )`);
    this.addSql('create index offering_credits_investor_idx on offering_credits (offering_id, investor_id)');
  }
}
