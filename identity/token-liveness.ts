import type { Knex } from '@mikro-orm/postgresql';
import type { Principal } from '../domain/principal';
import { unauthenticated } from '../lib/errors';

/** Verdicts one process remembers at most; past it the oldest is forgotten first (each is a few dozen bytes). */
const VERDICT_LIMIT = 10_000;

/**
 * Whether what stands behind a valid access token still stands: the organisation API key it was
 * exchanged with (not revoked), or the console sign-in it belongs to (neither revoked nor past its
 * end). A token with neither (a test's, or a tool's signed with the key itself) has nothing to end.
 *
 * The verdict on each key or session is remembered by this process for `cacheSeconds`, so a
 * revocation reaches every API instance within that long (docs/decisions/0272-revocation-at-verify.md);
 * `forget` ends it at once in the process that revoked.
 */
export function tokenLiveness(knex: () => Knex, cacheSeconds: number) {
  const verdicts = new Map<string, { live: boolean; until: number }>();

  async function live(kind: 'key' | 'session', id: string, fresh: boolean, look: () => Promise<boolean>) {
    const name = `${kind}:${id}`;
    const known = verdicts.get(name);
    if (!fresh && known && known.until > Date.now()) return known.live;
    const verdict = await look();
    verdicts.delete(name); // re-inserted last: the map's order is the order of freshness
    if (verdicts.size >= VERDICT_LIMIT) verdicts.delete(verdicts.keys().next().value!);
    verdicts.set(name, { live: verdict, until: Date.now() + cacheSeconds * 1000 });
    return verdict;
  }

  const keyLive = (id: string) =>
    live('key', id, false, async () => {
      const row = await knex()('identity_api_keys').where({ id }).first('revoked_at');
      return row !== undefined && row.revoked_at === null;
    });

  const sessionLive = (id: string, fresh: boolean) =>
    live('session', id, fresh, async () => {
      const row = await knex()('console_sessions')
        .where({ id, revoked_at: null })
        .andWhere('expires_at', '>', knex().fn.now())
        .first('id');
      return row !== undefined;
    });

  return {
    /**
     * Throws 401 TOKEN_REVOKED when the key or session behind the principal has ended. `fresh`
     * skips the remembered verdict (the console asks so on each page: a signed-out cookie ends at once).
     */
    async assertLive(p: Principal, opts: { fresh?: boolean } = {}): Promise<void> {
      if (p.apiKeyId && !(await keyLive(p.apiKeyId)))
        throw unauthenticated('The API key this access token was exchanged with has been revoked', 'TOKEN_REVOKED');
      if (p.consoleSession && !(await sessionLive(p.consoleSession, opts.fresh ?? false)))
        throw unauthenticated('The console session of this access token has ended; sign in again', 'TOKEN_REVOKED');
    },
    /** Forgets a verdict this process holds, when it revoked the key or session itself. */
    forget(kind: 'key' | 'session', id: string): void {
      verdicts.delete(`${kind}:${id}`);
    },
  };
}
export type TokenLiveness = ReturnType<typeof tokenLiveness>;
