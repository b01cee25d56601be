import { Migration } from '@mikro-orm/migrations';

/**
 * Rate-limit counters shared by every API instance (db/rate-limits.ts). The shape is the one
 * rate-limiter-flexible's PostgreSQL store expects; it is made here so no process needs DDL
 * rights at run time.
 */
export class Migration0011RateLimits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table rate_limits (
        key varchar(255) primary key,
        points integer not null default 0,
        expire bigint
      )`);
    this.addSql('create index rate_limits_expire on rate_limits (expire)');
  }
}
