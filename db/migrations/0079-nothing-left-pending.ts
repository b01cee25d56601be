import { Migration } from '@mikro-orm/migrations';

/**
 * docs/decisions/0290-nothing-left-pending.md: a deleted endpoint's waiting deliveries are stopped
 * in the background from a work list, a page at a time (webhooks/endpoints/deleted-endpoints.ts), not inside
 * the DELETE request; and deliveries stranded `pending` by an earlier disable or delete (taken off
 * the queue, never attempted) end `failed` with a not-sent attempt that says why, as the engine now
 * ends them (webhooks/deliveries/attempt-store.ts, stopWaiting). The texts are this migration's own copy.
 */
export class Migration0079NothingLeftPending extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table webhook_endpoint_cleanups (
      endpoint_id uuid primary key references webhook_endpoints (id),
      created_at timestamptz not null default now())`);
    this.addSql(`with stranded as (
        select d.id, e.deleted_at is not null as deleted,
               (select max(a.number) from webhook_attempts a where a.delivery_id = d.id) as last
          from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
         where d.status = 'pending' and (e.status <> 'enabled' or e.deleted_at is not null)
           and not exists (select 1 from webhook_queue q where q.delivery_id = d.id)
           and not exists (select 1 from webhook_attempts a where a.delivery_id = d.id and a.duration_ms is null)),
      unsent as (
        insert into webhook_attempts (delivery_id, number, attempted_at, owner, duration_ms, error)
        select s.id, coalesce(s.last, 0) + 1, now(), 'engine:not-sent', 0,
               case when s.deleted
                    then 'ENDPOINT_DELETED: not sent, the endpoint was deleted before this delivery had its turn'
                    else 'ENDPOINT_DISABLED: not sent, the endpoint was disabled before this delivery had its turn; re-enable it, then retry or recover' end
          from stranded s
        on conflict (delivery_id, number) do nothing
        returning delivery_id, number, attempted_at)
      update webhook_deliveries d
         set status = 'failed', next_attempt_at = null, updated_at = now(),
             attempt_count = greatest(d.attempt_count, u.number), last_attempt_at = u.attempted_at
        from unsent u where d.id = u.delivery_id`);
  }
}
