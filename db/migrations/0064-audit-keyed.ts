import { Migration } from '@mikro-orm/migrations';

/**
 * The keyed audit chain (docs/decisions/0266-audit-entries-keyed-with-hmac.md): each new entry's
 * hash is an HMAC-SHA256 under a key the database does not hold (AUDIT_HMAC_KEYS), and the entry
 * names the key's id. Entries written before this have no key id and keep their plain SHA-256,
 * verified as before up to an organisation's first keyed entry. A nullable column is a
 * metadata-only change: the append-only trigger does not fire and no row is rewritten.
 */
export class Migration0064AuditKeyed extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table audit_events add column key_id text');
  }
}
