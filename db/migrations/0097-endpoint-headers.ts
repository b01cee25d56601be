import { Migration } from '@mikro-orm/migrations';

/**
 * docs/decisions/0400-custom-headers-per-endpoint.md: static headers every POST to the endpoint
 * carries. `headers` lists them in order, each `{ name, secret, value }` where a secret header's
 * value is null; the secret values are `headers_secret_ciphertext`, one sealed JSON object of name
 * to value (webhooks/endpoints/custom-headers.ts names what it is sealed to). Both null: no custom headers.
 * Additive: endpoints registered before it have neither and send as before.
 */
export class Migration0097EndpointHeaders extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table webhook_endpoints
      add column headers jsonb,
      add column headers_secret_ciphertext text`);
  }
}
