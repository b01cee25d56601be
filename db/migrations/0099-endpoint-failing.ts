import { Migration } from '@mikro-orm/migrations';

/**
 * An endpoint's failing spell as the operational events need it
 * (docs/decisions/0415-operational-events.md): the failed attempts counted since its last success
 * (until the spell is reported), and when `webhook.endpoint.failing` was published for the spell,
 * so it is published once and `webhook.endpoint.recovered` only after it. Additive: an older release
 * never reads them, and leaves them as they are.
 */
export class Migration0099EndpointFailing extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table webhook_endpoints
        add column failing_attempts integer not null default 0,
        add column failing_reported_at timestamptz`);
  }
}
