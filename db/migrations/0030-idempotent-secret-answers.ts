import { Migration } from '@mikro-orm/migrations';

/**
 * An idempotent answer that holds a secret (an API key, a
 * signing secret) is replayed only to the caller holding the roles it was given to; `replay_roles`
 * keeps those roles (sorted, space-separated), and is null for every other answer.
 */
export class Migration0030IdempotentSecretAnswers extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table idempotency_keys add column replay_roles text');
  }
}
