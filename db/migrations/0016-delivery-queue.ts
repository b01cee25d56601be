import { Migration } from '@mikro-orm/migrations';

/**
 * The dispatcher (docs/decisions/0173-dispatcher-engine-shape.md): a delivery waiting for
 * its first attempt is a row of `webhook_queue`, written by the publishing transaction and taken by
 * a worker's dispatcher; `webhook_endpoint_flow` holds each endpoint's rate-limit bucket and circuit
 * breaker; a failed first attempt waits in `webhook_schedule_handovers` until its retry schedule
 * (a delivery workflow) has been handed to Temporal.
 */
export class Migration0016DeliveryQueue extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table webhook_endpoints
        add column max_in_flight integer check (max_in_flight between 1 and 256),
        add column rate_limit_per_second integer check (rate_limit_per_second between 1 and 10000)`);
    this.addSql(`
      create table webhook_queue (
        delivery_id uuid primary key references webhook_deliveries(id) on delete cascade,
        endpoint_id uuid not null,
        org_id uuid not null,
        -- Taken oldest first per endpoint.
        seq bigint generated always as identity,
        -- Set for endpoints that keep per-subscription order: the subscription's ordered workflow takes it.
        ordered_key text,
        event_seq bigint not null,
        enqueued_at timestamptz not null default now()
      )`);
    this.addSql('create index webhook_queue_direct_idx on webhook_queue (endpoint_id, seq) where ordered_key is null');
    // A queue: every row is deleted soon after it is written, and each claim's index scan walks the
    // dead entries before the first live one. Vacuum it as soon as a few thousand are dead.
    this.addSql(
      'alter table webhook_queue set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 2000, autovacuum_vacuum_cost_delay = 0)',
    );
    this.addSql('create index webhook_queue_ordered_idx on webhook_queue (seq) where ordered_key is not null');
    this.addSql(`
      create table webhook_endpoint_flow (
        endpoint_id uuid primary key references webhook_endpoints(id),
        -- The rate limit: the earliest start of the endpoint's next delivery (null: now).
        next_send_at timestamptz,
        circuit_state text not null default 'closed' check (circuit_state in ('closed', 'open', 'half_open')),
        consecutive_failures integer not null default 0,
        opened_at timestamptz,
        -- When the next probe may go (open), or until when the probe in flight holds it (half_open).
        probe_at timestamptz,
        -- Openings since the last close: each doubles the cool-down.
        open_count integer not null default 0
      )`);
    this.addSql('insert into webhook_endpoint_flow (endpoint_id) select id from webhook_endpoints');
    this.addSql(`
      create table webhook_schedule_handovers (
        delivery_id uuid primary key references webhook_deliveries(id) on delete cascade,
        endpoint_id uuid not null,
        event_type text not null,
        first_delay_ms bigint,
        created_at timestamptz not null default now()
      )`);
    this.addSql('create index webhook_schedule_handovers_created_idx on webhook_schedule_handovers (created_at)');
    // The old stuck-delivery sweep's index; nothing reads pending deliveries by age any more, and every
    // status change of a delivery paid for it.
    this.addSql('drop index if exists webhook_deliveries_pending_idx');
    // Every read of an organisation's events goes by (org_id, seq); this one only cost each publish a write.
    this.addSql('drop index if exists events_org_type_idx');
    // In-flight attempts: counted per endpoint by the dispatcher, and swept when their worker died.
    this.addSql('create index webhook_attempts_open_idx on webhook_attempts (attempted_at) where duration_ms is null');
    this.addSql(
      'alter table webhook_endpoint_flow set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 2000, autovacuum_vacuum_cost_delay = 0)',
    );
    // The delivery id of (event, endpoint): a v8 UUID over SHA-256, computed where the row is
    // written; the tests' twin (test/webhooks/support/delivery-id.ts) computes the same in JavaScript.
    this.addSql(`
      create function webhook_delivery_id(event_id uuid, endpoint_id uuid) returns uuid
      language sql immutable parallel safe as $$
        select (overlay(overlay(encode(substr(h, 1, 16), 'hex') placing '8' from 13 for 1)
                placing substr('89ab', (get_byte(h, 8) & 3) + 1, 1) from 17 for 1))::uuid
          from (select sha256(convert_to(event_id::text || ':' || endpoint_id::text, 'UTF8')) as h) x
      $$`);
    // Deliveries that a first-attempt batcher of the old engine still held: the dispatcher takes
    // them. Ordered endpoints' deliveries stay with their ordered workflows.
    this.addSql(`
      insert into webhook_queue (delivery_id, endpoint_id, org_id, event_seq)
      select d.id, d.endpoint_id, d.org_id, ev.seq
        from webhook_deliveries d
        join webhook_endpoints e on e.id = d.endpoint_id and e.ordering = 'none'
        join events ev on ev.id = d.event_id
       where d.status = 'pending'
         and not exists (select 1 from webhook_attempts a where a.delivery_id = d.id)
       order by d.created_at`);
  }
}
