import { Migration } from '@mikro-orm/migrations';

/** An endpoint's recoveries, newest first, a cursor page at a time. */
export class Migration0056RecoveryList extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'create index webhook_recoveries_endpoint_idx on webhook_recoveries (endpoint_id, created_at desc, id desc)',
    );
  }
}
