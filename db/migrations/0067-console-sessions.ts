import { Migration } from '@mikro-orm/migrations';

/**
 * Console sessions as server-side records (docs/decisions/0271-console-sessions-server-side.md):
 * a console access token names its row (`sid`), renewal needs the row live, sign-out and an
 * administrator's revocation end it. `expires_at` is the sign-in time plus
 * CONSOLE_SESSION_MAX_SECONDS, past which no renewal is given.
 */
export class Migration0067ConsoleSessions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table console_sessions (
        id uuid primary key,
        org_id uuid not null,
        user_id text not null,
        roles text[] not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        renewed_at timestamptz,
        revoked_at timestamptz,
        revoked_by text,
        client_address text,
        user_agent text
      )`);
    this.addSql('create index console_sessions_org_idx on console_sessions (org_id, created_at desc)');
  }
}
