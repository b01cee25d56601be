import { Migration } from '@mikro-orm/migrations';

/**
 * The wait an endpoint asked for (Retry-After, capped) is kept with its attempt: an attempt that
 * runs again after its worker died finds its result recorded and answers the same wait.
 */
export class Migration0015AttemptRetryAfter extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table webhook_attempts add column retry_after_ms bigint');
  }
}
