import { Migration } from '@mikro-orm/migrations';

/**
 * Payload versions (docs/decisions/0420-versioned-payloads.md): the version an endpoint is pinned to, and the
 * version each delivery was planned in, which every attempt of it sends. Additive: a previous release neither
 * reads nor writes them, and what it inserts gets version 1, the spec's shape, which is what it sends.
 */
export class Migration0101PayloadVersions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table webhook_endpoints add column payload_version text not null default '1'`);
    this.addSql(`alter table webhook_deliveries add column payload_version text not null default '1'`);
  }
}
