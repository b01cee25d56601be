import { Migration } from '@mikro-orm/migrations';

/**
 * docs/decisions/0319-authenticated-receivers.md: an endpoint may authenticate at the transport,
 * with mutual TLS or an OAuth2 client-credentials token. `authentication` holds what is not secret
 * (type, client certificate, CA, token URL, client id, scope); the client key or client secret is
 * `authentication_secret_ciphertext`, sealed as signing secrets are (webhooks/secrets/secret-box.ts). Both
 * null: the endpoint authenticates by the signature alone, as before. Read with the endpoint's row,
 * so an endpoint without authentication costs the delivery path nothing more.
 */
export class Migration0083EndpointAuthentication extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table webhook_endpoints
      add column authentication jsonb,
      add column authentication_secret_ciphertext text`);
    this.addSql(`alter table webhook_endpoints add constraint webhook_endpoints_authentication_sealed
      check ((authentication is null) = (authentication_secret_ciphertext is null))`);
  }
}
