import type { Orm } from '../../db/orm';

export interface IdempotencyScope {
  principal: string;
  method: string;
  path: string;
  key: string;
}

export type Claim =
  | { kind: 'claimed' }
  /** `boundToRoles`: set when the answer holds a secret, the roles it may be replayed to. */
  | { kind: 'replay'; status: number; bodySealed: string | null; boundToRoles: string | null }
  | { kind: 'reused' }
  | { kind: 'in_use'; retryAfterSeconds: number };

/** Rows of idempotency_keys (db/migrations/0010, 0030): claim, complete, release (expired rows: the retention prune, db/retention.ts). */
export function idempotencyStore(orm: Orm, ttlSeconds: number, leaseSeconds: number) {
  const sql = (query: string, params: unknown[]) =>
    orm.em.getConnection().execute(query, params, 'all') as Promise<Record<string, unknown>[]>;
  const pk = (s: IdempotencyScope) => [s.principal, s.method, s.path, s.key];

  async function tryClaim(s: IdempotencyScope, hash: string): Promise<Claim | undefined> {
    // A new key, an expired one, or one whose first request died holding it (same body only).
    const taken = await sql(
      `insert into idempotency_keys (principal, method, path, key, request_hash, locked_until, expires_at)
       values (?, ?, ?, ?, ?, now() + make_interval(secs => ?), now() + make_interval(secs => ?))
       on conflict (principal, method, path, key) do update
         set request_hash = excluded.request_hash, status = null, body_sealed = null, replay_roles = null, created_at = now(),
             locked_until = excluded.locked_until, expires_at = excluded.expires_at
         where idempotency_keys.expires_at < now()
            or (idempotency_keys.status is null and idempotency_keys.locked_until < now() and idempotency_keys.request_hash = excluded.request_hash)
       returning 1 as claimed`,
      [...pk(s), hash, leaseSeconds, ttlSeconds],
    );
    if (taken.length) return { kind: 'claimed' };
    const [row] = await sql(
      `select request_hash, status, body_sealed, replay_roles, greatest(1, ceil(extract(epoch from locked_until - now())))::int as wait
         from idempotency_keys where principal = ? and method = ? and path = ? and key = ?`,
      pk(s),
    );
    if (!row) return undefined; // released between the two statements: claim again
    if (row.request_hash !== hash) return { kind: 'reused' };
    if (row.status === null) return { kind: 'in_use', retryAfterSeconds: Math.min(Number(row.wait), 60) };
    return {
      kind: 'replay',
      status: Number(row.status),
      bodySealed: (row.body_sealed as string | null) ?? null,
      boundToRoles: (row.replay_roles as string | null) ?? null,
    };
  }

  return {
    async claim(s: IdempotencyScope, hash: string): Promise<Claim> {
      for (let tries = 0; tries < 3; tries++) {
        const claim = await tryClaim(s, hash);
        if (claim) return claim;
      }
      return { kind: 'in_use', retryAfterSeconds: 1 };
    },

    async complete(
      s: IdempotencyScope,
      answer: { status: number; bodySealed: string | null; boundToRoles: string | null },
    ): Promise<void> {
      await sql(
        'update idempotency_keys set status = ?, body_sealed = ?, replay_roles = ? where principal = ? and method = ? and path = ? and key = ? and status is null',
        [answer.status, answer.bodySealed, answer.boundToRoles, ...pk(s)],
      );
    },

    /** The request ended without an answer worth keeping: the next request with the key runs afresh. */
    async release(s: IdempotencyScope): Promise<void> {
      await sql(
        'delete from idempotency_keys where principal = ? and method = ? and path = ? and key = ? and status is null',
        pk(s),
      );
    },
  };
}
