import type { Knex } from '@mikro-orm/postgresql';
import type { Role } from '../domain/principal';
import { notFound } from '../lib/errors';
import { cutToCodePoints } from '../lib/text';

/** One console sign-in (db/migrations/0067-console-sessions.ts); its id is the `sid` of its access tokens. */
export interface ConsoleSessionRow {
  id: string;
  org_id: string;
  user_id: string;
  roles: Role[];
  created_at: Date;
  expires_at: Date;
  renewed_at: Date | null;
  revoked_at: Date | null;
  revoked_by: string | null;
  client_address: string | null;
  user_agent: string | null;
}

export type ConsoleSessionStatus = 'live' | 'expired' | 'revoked';

export const statusOf = (s: Pick<ConsoleSessionRow, 'revoked_at' | 'expires_at'>, now = new Date()) =>
  (s.revoked_at ? 'revoked' : s.expires_at <= now ? 'expired' : 'live') satisfies ConsoleSessionStatus;

export const toConsoleSessionView = (s: ConsoleSessionRow) => ({
  id: s.id,
  org_id: s.org_id,
  user_id: s.user_id,
  roles: s.roles,
  status: statusOf(s),
  created_at: s.created_at.toISOString(),
  expires_at: s.expires_at.toISOString(),
  renewed_at: s.renewed_at?.toISOString() ?? null,
  revoked_at: s.revoked_at?.toISOString() ?? null,
  revoked_by: s.revoked_by,
  client_address: s.client_address,
  user_agent: s.user_agent,
});

/** The database hands timestamps back as text (its microseconds kept, decision 0017); rows here carry Dates. */
const stamp = (v: Date | string | null) => (v === null ? null : new Date(v));
function normal(row: ConsoleSessionRow): ConsoleSessionRow;
function normal(row: ConsoleSessionRow | undefined): ConsoleSessionRow | undefined;
function normal(row: ConsoleSessionRow | undefined): ConsoleSessionRow | undefined {
  if (!row) return undefined;
  return {
    ...row,
    created_at: stamp(row.created_at)!,
    expires_at: stamp(row.expires_at)!,
    renewed_at: stamp(row.renewed_at),
    revoked_at: stamp(row.revoked_at),
  };
}

/** Sessions listed at most: the newest first (an organisation's people sign in a few times a day). */
const LIST_LIMIT = 200;

/** The queries of console_sessions, its one home. */
export const consoleSessions = {
  async open(
    db: Knex | Knex.Transaction,
    s: Pick<ConsoleSessionRow, 'id' | 'org_id' | 'user_id' | 'roles' | 'client_address' | 'user_agent'> & {
      maxSeconds: number;
    },
  ): Promise<void> {
    const now = new Date();
    await db('console_sessions').insert({
      id: s.id,
      org_id: s.org_id,
      user_id: s.user_id,
      roles: s.roles,
      created_at: now,
      expires_at: new Date(now.getTime() + s.maxSeconds * 1000),
      client_address: s.client_address == null ? null : cutToCodePoints(s.client_address, 100),
      user_agent: s.user_agent == null ? null : cutToCodePoints(s.user_agent, 300),
    });
  },

  async list(db: Knex, orgId: string): Promise<ConsoleSessionRow[]> {
    const rows = await db<ConsoleSessionRow>('console_sessions')
      .where({ org_id: orgId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(LIST_LIMIT);
    return rows.map((r) => normal(r));
  },

  /** Marks a renewal, only while the session is live; false when it is not (revoked, expired or unknown). */
  async renew(db: Knex, id: string, owner: { orgId: string; userId: string }): Promise<ConsoleSessionRow | undefined> {
    const [row] = await db<ConsoleSessionRow>('console_sessions')
      .where({ id, org_id: owner.orgId, user_id: owner.userId, revoked_at: null })
      .andWhere('expires_at', '>', db.fn.now())
      .update({ renewed_at: db.fn.now() })
      .returning('*');
    return normal(row);
  },

  /**
   * Ends a session of the organisation; ending it twice keeps the first end. Answers the row as
   * it was before, and as it is now.
   */
  async revoke(
    trx: Knex.Transaction,
    orgId: string,
    id: string,
    by: string,
  ): Promise<{ before: ConsoleSessionRow; after: ConsoleSessionRow }> {
    const before = normal(
      await trx<ConsoleSessionRow>('console_sessions').where({ id, org_id: orgId }).forUpdate().first(),
    );
    if (!before) throw notFound('Console session');
    if (before.revoked_at) return { before, after: before };
    const [after] = await trx<ConsoleSessionRow>('console_sessions')
      .where({ id })
      .update({ revoked_at: trx.fn.now(), revoked_by: by })
      .returning('*');
    return { before, after: normal(after!) };
  },
};
