import { Migration } from '@mikro-orm/migrations';

/**
 * An endpoint may ask for its deliveries in order per subscription; the engine then
 * routes them through one ordered-delivery workflow per (endpoint, subscription).
 */
export class Migration0013EndpointOrdering extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table webhook_endpoints add column ordering text not null default 'none' check (ordering in ('none', 'per_subscription'))`,
    );
  }
}
