import { Migration } from '@mikro-orm/migrations';

/**
 * Traces: an event keeps the W3C `traceparent` of the span that published it (null when
 * tracing was off), so its deliveries' POSTs join the publishing request's trace; an endpoint may
 * ask for that header on its POSTs (`send_traceparent`, off by default). Both are metadata-only
 * changes in PostgreSQL 11+ (a nullable column, a constant default): no table rewrite.
 */
export class Migration0060Traces extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table events add column traceparent text');
    this.addSql('alter table webhook_endpoints add column send_traceparent boolean not null default false');
  }
}
