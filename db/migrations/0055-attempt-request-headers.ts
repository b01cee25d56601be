import { Migration } from '@mikro-orm/migrations';

/**
 * Each attempt keeps the request headers it was sent with (the signature headers are
 * made at each send, from the secret and the time of that send). `json`, not `jsonb`: the map is
 * kept as sent, in its order, and is only ever read back whole. Null: nothing was sent (circuit
 * open, signing failed, in doubt) or the attempt predates this column. The body is not repeated
 * here: every attempt sends the event's stored body (webhook_event_bodies) byte for byte.
 */
export class Migration0055AttemptRequestHeaders extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table webhook_attempts add column request_headers json');
  }
}
