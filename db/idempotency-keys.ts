import { createHash } from 'node:crypto';
import type { Orm } from './orm';
import { preparedStatement } from './prepared';
import { groupCommit } from '../lib/group-commit';

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

interface Answer {
  status: number;
  bodySealed: string | null;
  boundToRoles: string | null;
}

/** What seals a body's digest (the webhook secret box, webhooks/secrets/secret-box.ts), as this store uses it. */
export interface DigestBox {
  seal(aad: string, plaintext: string): string;
  open(aad: string, sealed: string): string;
}

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

/** Requests one claim or one kept answer statement carries at most. */
const MAX_BATCH = 200;

/**
 * A new key or an expired one, for each of the input's keys; the `ord` of each claimed (a key whose first
 * request died holding it is taken over by `held` below, which can open the sealed digest to compare). Taken in key order, so two statements that carry
 * some of the same keys (two API instances) wait for each other rather than deadlock.
 */
const CLAIM = preparedStatement<{ ord: number }>(
  'idempotency-claim',
  `with
  input as (select * from jsonb_to_recordset(?::jsonb)
              as v(ord int, principal text, method text, path text, key text, request_hash text)),
  taken as (insert into idempotency_keys (principal, method, path, key, request_hash, locked_until, expires_at)
            select principal, method, path, key, request_hash,
                   now() + make_interval(secs => ?::double precision), now() + make_interval(secs => ?::double precision)
              from input order by principal, method, path, key
            on conflict (principal, method, path, key) do update
              set request_hash = excluded.request_hash, status = null, body_sealed = null, replay_roles = null,
                  created_at = now(), locked_until = excluded.locked_until, expires_at = excluded.expires_at
              where idempotency_keys.expires_at < now()
            returning principal, method, path, key)
  select i.ord from input i join taken t using (principal, method, path, key)`,
);

/**
 * Each input key's kept answer, on the row its request still holds (status null). The keys come as arrays, whose
 * length the planner sees: from jsonb_to_recordset (100 rows to the planner, whatever it holds) it joined the
 * whole table by hash rather than look each key up, 2 ms a statement once the table held a few thousand keys.
 */
const COMPLETE = preparedStatement(
  'idempotency-complete',
  `update idempotency_keys k
      set status = v.status, body_sealed = v.body_sealed, replay_roles = v.replay_roles
     from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::int[], ?::text[], ?::text[])
            as v(principal, method, path, key, status, body_sealed, replay_roles)
    where k.principal = v.principal and k.method = v.method and k.path = v.path and k.key = v.key
      and k.status is null`,
);

const idOf = (s: IdempotencyScope) => JSON.stringify([s.principal, s.method, s.path, s.key]);

/**
 * Rows of idempotency_keys (db/migrations/0010, 0030): claim, complete, release (expired rows: the retention prune,
 * db/retention.ts). Claims and kept answers that arrive while one of their statements is in flight go together in
 * the next (group commit, lib/group-commit.ts): under load one statement serves many requests, alone a request
 * waits for nothing; each is committed before its caller goes on, as one statement each was.
 * A body's digest is kept sealed in the same box as the answer (docs/decisions/0382-idempotency-body-digests-sealed.md):
 * the database holds nothing a guessed body (a name, an address) could be checked against; a row from before keeps
 * its bare digest, which still matches its replays until it expires.
 */
export function idempotencyStore(orm: Orm, box: DigestBox, ttlSeconds: number, leaseSeconds: number) {
  const knex = () => orm.em.getConnection().getKnex();
  const sql = (query: string, params: unknown[]) =>
    orm.em.getConnection().execute(query, params, 'all') as Promise<Record<string, unknown>[]>;
  const pk = (s: IdempotencyScope) => [s.principal, s.method, s.path, s.key];

  /** Whether each key was claimed; a key twice in one batch is tried once, its second is not (it finds the first). */
  const claimAll = groupCommit(
    async (items: { scope: IdempotencyScope; hash: string }[]): Promise<boolean[]> => {
      const first = new Map<string, number>();
      items.forEach(({ scope }, ord) => {
        if (!first.has(idOf(scope))) first.set(idOf(scope), ord);
      });
      const input = [...first.values()].map((ord) => ({ ord, ...items[ord]!.scope, request_hash: items[ord]!.hash }));
      const rows = await CLAIM(knex(), [JSON.stringify(input), leaseSeconds, ttlSeconds]);
      const claimed = new Set(rows.map((r) => Number(r.ord)));
      return items.map((_, ord) => claimed.has(ord));
    },
    { maxBatch: MAX_BATCH },
  );

  /** A key's first kept answer counts: a second for the same key in one batch finds the row no longer held, as alone it would. */
  const completeAll = groupCommit(
    async (items: { scope: IdempotencyScope; answer: Answer }[]): Promise<void[]> => {
      const firsts = new Map<string, (typeof items)[number]>();
      for (const item of items) if (!firsts.has(idOf(item.scope))) firsts.set(idOf(item.scope), item);
      const kept = [...firsts.values()];
      const column = <T>(of: (item: (typeof items)[number]) => T) => kept.map(of);
      await COMPLETE(knex(), [
        column((i) => i.scope.principal),
        column((i) => i.scope.method),
        column((i) => i.scope.path),
        column((i) => i.scope.key),
        column((i) => i.answer.status),
        column((i) => i.answer.bodySealed),
        column((i) => i.answer.boundToRoles),
      ]);
      return items.map(() => undefined);
    },
    { maxBatch: MAX_BATCH },
  );

  function sameRequest(s: IdempotencyScope, stored: string, digest: string): boolean {
    if (BARE_DIGEST.test(stored)) return stored === digest;
    // A key missing from the ring throws: the keyring is wrong, and no answer is better than a wrong one.
    return box.open(requestHashAad(scopeIdOf(s)), stored) === digest;
  }

  /** The key's row as it stands, once a claim of it found it taken. */
  async function held(s: IdempotencyScope, digest: string, sealed: string): Promise<Claim | undefined> {
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
      const sealed = box.seal(requestHashAad(scopeIdOf(s)), digest);
      for (let tries = 0; tries < 3; tries++) {
        if (await claimAll({ scope: s, hash: sealed })) return { kind: 'claimed' };
        const claim = await held(s, digest, sealed);
        if (claim) return claim;
      }
      return { kind: 'in_use', retryAfterSeconds: 1 };
    },

    complete(s: IdempotencyScope, answer: Answer): Promise<void> {
      return completeAll({ scope: s, answer });
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
