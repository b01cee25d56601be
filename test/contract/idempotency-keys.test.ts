import { randomUUID } from 'node:crypto';
import type { Knex } from '@mikro-orm/postgresql';
import { loadConfig } from '../../lib/runtime/config';
import { openOrm, type Orm } from '../../db/orm';
import { idempotencyStore, type IdempotencyScope } from '../../db/idempotency-keys';
import { secretBoxFrom } from '../../webhooks';
import { freshDatabase } from '../support/service';

/**
 * The Idempotency-Key store on the real PostgreSQL (db/idempotency-keys.ts): claims and kept answers
 * that arrive together share one statement (docs/decisions/0395-api-path-cpu-per-message.md), and each request
 * still gets its own verdict: claimed, in use, reused with another body, or its kept answer replayed.
 */
describe('idempotencyStore', () => {
  let orm: Orm;
  let knex: Knex;
  let store: ReturnType<typeof idempotencyStore>;
  const scope = (key = randomUUID()): IdempotencyScope => ({
    principal: `org-${randomUUID()}:user`,
    method: 'POST',
    path: '/notifications/webhook-endpoints/x/test',
    key,
  });

  beforeAll(async () => {
    const config = loadConfig({ ...process.env, NODE_ENV: 'test', DATABASE_URL: await freshDatabase() });
    orm = await openOrm(config);
    knex = orm.em.getConnection().getKnex();
    store = idempotencyStore(orm, secretBoxFrom(config), 3600, 60);
  }, 60_000);

  afterAll(() => orm?.close());

  /** How many pool connections `work` took: one per statement it sent on its own. */
  async function statementsOf<T>(work: () => Promise<T>): Promise<[T, number]> {
    const spy = jest.spyOn(knex.client as { acquireConnection(): Promise<unknown> }, 'acquireConnection');
    try {
      const result = await work();
      return [result, spy.mock.calls.length];
    } finally {
      spy.mockRestore();
    }
  }

  it('claims keys that arrive together in one statement, and keeps their answers in one more', async () => {
    const scopes = Array.from({ length: 20 }, () => scope());
    const [claims, claimStatements] = await statementsOf(() => Promise.all(scopes.map((s) => store.claim(s, 'h'))));
    expect(claims.map((c) => c.kind)).toEqual(scopes.map(() => 'claimed'));
    expect(claimStatements).toBe(1);
    const [, completeStatements] = await statementsOf(() =>
      Promise.all(
        scopes.map((s, i) => store.complete(s, { status: 202, bodySealed: `sealed-${i}`, boundToRoles: null })),
      ),
    );
    expect(completeStatements).toBe(1);
    const replays = await Promise.all(scopes.map((s) => store.claim(s, 'h')));
    expect(replays).toEqual(
      scopes.map((_, i) => ({ kind: 'replay', status: 202, bodySealed: `sealed-${i}`, boundToRoles: null })),
    );
  });

  it('gives each request of one batch its own verdict: a key twice is in use, another body is reused', async () => {
    const held = scope();
    await store.claim(held, 'first');
    const fresh = scope();
    const [again, reused, twice, once] = await Promise.all([
      store.claim(held, 'first'),
      store.claim(held, 'other'),
      store.claim(fresh, 'h'),
      store.claim(fresh, 'h'),
    ]);
    expect(again).toEqual({ kind: 'in_use', retryAfterSeconds: expect.any(Number) });
    expect(reused).toEqual({ kind: 'reused' });
    // The same new key twice in one batch: exactly one of them holds it.
    expect([twice!.kind, once!.kind].sort()).toEqual(['claimed', 'in_use']);
  });

  it('keeps the first answer for a key, and a released key runs afresh', async () => {
    const s = scope();
    await store.claim(s, 'h');
    await Promise.all([
      store.complete(s, { status: 202, bodySealed: 'first', boundToRoles: 'staff' }),
      store.complete(s, { status: 500, bodySealed: 'second', boundToRoles: null }),
    ]);
    expect(await store.claim(s, 'h')).toEqual({
      kind: 'replay',
      status: 202,
      bodySealed: 'first',
      boundToRoles: 'staff',
    });
    const r = scope();
    await store.claim(r, 'h');
    await store.release(r);
    expect(await store.claim(r, 'h')).toEqual({ kind: 'claimed' });
  });
});
