import { Migration } from '@mikro-orm/migrations';

/**
 * Payload filters (docs/decisions/0398-payload-filters.md): the filter as the integrator gave it (shown back),
 * and its jsonpath predicate, compiled once when set, which the publish statement evaluates per event.
 * Additive: a previous release neither reads nor writes them, and an endpoint without one gets what it did.
 */
export class Migration0100EndpointFilters extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table webhook_endpoints add column filter jsonb, add column filter_path jsonpath');
  }
}
