import { Migration } from '@mikro-orm/migrations';

/**
 * An offering's raised amount is a sum of subscriptions, each up to numeric(18,2)'s largest value:
 * it gets room for a billion of them. Before, the tenth largest completion overflowed the column
 * and its projection failed on every retry (test/subscriptions/money.test.ts).
 */
export class Migration0014OfferingTotals extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table offerings alter column raised_amount type numeric(38,2)');
  }
}
