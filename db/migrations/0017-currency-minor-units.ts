import { Migration } from '@mikro-orm/migrations';

/**
 * Money columns hold every ISO 4217 minor unit (up to four places, CLF), with the same 15 whole
 * digits as before; each amount is still exact in its own currency (lib/money.ts). A processor
 * session is open until expired or paid: a new checkout expires only the open ones.
 */
export class Migration0017CurrencyMinorUnits extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table security_classes alter column price_per_unit type numeric(19,4)');
    this.addSql('alter table tranches alter column price_per_unit type numeric(19,4)');
    this.addSql('alter table offering_credits alter column amount type numeric(19,4)');
    this.addSql('alter table offerings alter column raised_amount type numeric(39,4)');
    this.addSql('alter table payment_references add column closed_at timestamptz');
    this.addSql(
      'create index payment_references_open_idx on payment_references (processor, subscription_id) where closed_at is null',
    );
  }
}
