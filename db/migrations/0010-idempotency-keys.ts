import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotency-Key on commands (api/middleware/idempotency.ts): one row per caller, method, path and
 * key. `status` is null while the first request runs (`locked_until` bounds how long a crashed one
 * holds the key); afterwards it holds the answer to replay, sealed, until `expires_at`.
 */
export class Migration0010IdempotencyKeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table idempotency_keys (
        principal text not null,
        method text not null,
        path text not null,
        key text not null,
        request_hash text not null,
        status integer,
        body_sealed text,
        locked_until timestamptz not null,
        created_at timestamptz not null default now(),
        expires_at timestamptz not null,
        primary key (principal, method, path, key)
      )`);
    this.addSql('create index idempotency_keys_expires_at on idempotency_keys (expires_at)');
  }
}
