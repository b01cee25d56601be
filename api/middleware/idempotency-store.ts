import { createHash } from 'node:crypto';
import type { Orm } from '../../db/orm';
import type { SecretBox } from '../../webhooks';

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

/**
 * One opaque id per caller, method, path and key: the associated data the kept answer is sealed to, and
 * the Temporal update id's stem (lib/runtime/idempotency-scope.ts). Made from the row's own columns, so
 * the reseal (scripts/webhook-secrets.ts) finds it again.
 */
export const scopeIdOf = (s: IdempotencyScope): string =>
  createHash('sha256')
    .update(JSON.stringify({ principal: s.principal, method: s.method, path: s.path, key: s.key }))
    .digest('hex');

/** What a request's body digest is sealed to: its scope, apart from the answer's. */
export const requestHashAad = (scopeId: string): string => `${scopeId}:request`;

/** A digest stored bare, before digests were sealed (docs/decisions/0382-idempotency-body-digests-sealed.md). */
const BARE_DIGEST = /^[0-9a-f]{64}$/;

/**
 * Rows of idempotency_keys (db/migrations/0010, 0030): claim, complete, release (expired rows: the retention prune, db/retention.ts).
 * A body's digest is kept sealed in the same box as the answer (docs/decisions/0382-idempotency-body-digests-sealed.md):
 * the database holds nothing a guessed body (a name, an address) could be checked against; a row from before keeps
 * its bare digest, which still matches its replays until it expires.
 */
export function idempotencyStore(orm: Orm, box: SecretBox, ttlSeconds: number, leaseSeconds: number) {
  const sql = (query: string, params: unknown[]) =>
    orm.em.getConnection().execute(query, params, 'all') as Promise<Record<string, unknown>[]>;
  const pk = (s: IdempotencyScope) => [s.principal, s.method, s.path, s.key];

  function sameRequest(s: IdempotencyScope, stored: string, digest: string): boolean {
    if (BARE_DIGEST.test(stored)) return stored === digest;
    // A key missing from the ring throws: the keyring is wrong, and no answer is better than a wrong one.
    return box.open(requestHashAad(scopeIdOf(s)), stored) === digest;
  }

  async function tryClaim(s: IdempotencyScope, digest: string): Promise<Claim | undefined> {
    const sealed = box.seal(requestHashAad(scopeIdOf(s)), digest);
    // A new key, or an expired one.
    const taken = await sql(
      `insert into idempotency_keys (principal, method, path, key, request_hash, locked_until, expires_at)
       values (?, ?, ?, ?, ?, now() + make_interval(secs => ?), now() + make_interval(secs => ?))
       on conflict (principal, method, path, key) do update
         set request_hash = excluded.request_hash, status = null, body_sealed = null, replay_roles = null, created_at = now(),
             locked_until = excluded.locked_until, expires_at = excluded.expires_at
         where idempotency_keys.expires_at < now()
       returning 1 as claimed`,
      [...pk(s), sealed, leaseSeconds, ttlSeconds],
    );
    if (taken.length) return { kind: 'claimed' };
    const [row] = await sql(
      `select request_hash, status, body_sealed, replay_roles, locked_until < now() as lapsed,
              greatest(1, ceil(extract(epoch from locked_until - now())))::int as wait
         from idempotency_keys where principal = ? and method = ? and path = ? and key = ?`,
      pk(s),
    );
    if (!row) return undefined; // released between the two statements: claim again
    const stored = row.request_hash as string;
    if (!sameRequest(s, stored, digest)) return { kind: 'reused' };
    if (row.status === null) {
      if (!row.lapsed) return { kind: 'in_use', retryAfterSeconds: Math.min(Number(row.wait), 60) };
      // Its first request died holding it: the same body takes it over, unless another request did since.
      const retaken = await sql(
        `update idempotency_keys
            set request_hash = ?, created_at = now(),
                locked_until = now() + make_interval(secs => ?), expires_at = now() + make_interval(secs => ?)
          where principal = ? and method = ? and path = ? and key = ?
            and status is null and locked_until < now() and request_hash = ?
          returning 1 as claimed`,
        [sealed, leaseSeconds, ttlSeconds, ...pk(s), stored],
      );
      return retaken.length ? { kind: 'claimed' } : undefined;
    }
    return {
      kind: 'replay',
      status: Number(row.status),
      bodySealed: (row.body_sealed as string | null) ?? null,
      boundToRoles: (row.replay_roles as string | null) ?? null,
    };
  }

  return {
    /** `digest`: the SHA-256 of the request's canonical body, never stored as it is. */
    async claim(s: IdempotencyScope, digest: string): Promise<Claim> {
      for (let tries = 0; tries < 3; tries++) {
        const claim = await tryClaim(s, digest);
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
