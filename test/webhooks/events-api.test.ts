import { randomUUID } from 'node:crypto';
import { publishEvents } from '../../webhooks';
import type { ServiceEvent } from '../../domain/events';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { Client as PgClient } from 'pg';
import { ownerUrlOf, type TestService } from '../support/service';
import { registerHook } from './support/hooks';
import type { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';
import { until } from '../support/wait';

describe('GET /notifications/events', () => {
  let svc: TestService;
  let receiver: Receiver;
  let api: ReturnType<typeof http>;

  beforeAll(async () => {
    ({ svc, receiver, api } = await startWebhookStack('B'));
  });
  const publish = (events: ServiceEvent[], db = svc.orm.em.getConnection().getKnex()) =>
    publishEvents(db, events, { set: svc.set });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  const event = (who: Actor, type: string): ServiceEvent => ({
    id: randomUUID(),
    type,
    source: 'service.issuance',
    orgId: who.orgId,
    occurredAt: new Date().toISOString(),
    data: { subscription_id: randomUUID(), amount: '12.50' },
  });
  const list = (who: Actor, query = '') => api.get(`/notifications/events${query}`, who.token);

  it('lists every deliverable event of the organisation oldest first, each the envelope that was delivered', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const hook = await registerHook(svc, receiver, staff, 'events-api', ['subscription.approved']);
    const wanted = event(staff, 'subscription.approved');
    const unwanted = event(staff, 'subscription.created'); // no endpoint subscribes to it
    const internal = event(staff, 'subscription.internal_audit'); // not a deliverable type (spec §6.1)
    const foreign = event(await actor(svc, newOrg(), ['staff']), 'subscription.approved');
    await publish([wanted, unwanted, internal, foreign]);
    const [delivered] = await receiver.waitFor('events-api', 1);
    expect(JSON.parse(delivered!.body).event_id).toBe(wanted.id);

    // Events are listed once every older transaction of this database has ended (the worker's may still be open).
    const res = await until('both events to be listable', async () => {
      const r = await list(staff);
      return r.status !== 200 || r.body.data.items.length >= 2 ? r : undefined;
    });
    expect(res.status).toBe(200);
    expect(res.body.data.items.map((e: { event_id: string }) => e.event_id)).toEqual([wanted.id, unwanted.id]);
    expect(res.body.data.items[0]).toEqual(JSON.parse(delivered!.body));
    expect(res.body.data.items[1]).toEqual({
      event_id: unwanted.id,
      event_type: 'subscription.created',
      source: 'service.issuance',
      org_id: staff.orgId,
      version: '1',
      timestamp: unwanted.occurredAt,
      data: unwanted.data,
    });
    expect(res.body.data.has_more).toBe(false);
    expect(hook.id).toBeTruthy();
  });

  it('filters by event_type and pages forward with the after cursor', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const events = [
      event(staff, 'subscription.created'),
      event(staff, 'subscription.signed'),
      event(staff, 'subscription.created'),
      event(staff, 'subscription.created'),
    ];
    for (const e of events) await publish([e]);
    const created = events.filter((e) => e.type === 'subscription.created').map((e) => e.id);

    // Events are listed once every older transaction of this database has ended (the worker's may still be open).
    const first = await until('the published events to be listable', async () => {
      const res = await list(staff, '?event_type=subscription.created&limit=2');
      return res.body.data.items.length === 2 ? res : undefined;
    });
    expect(first.body.data.items.map((e: { event_id: string }) => e.event_id)).toEqual(created.slice(0, 2));
    expect(first.body.data.has_more).toBe(true);
    const second = await list(staff, `?event_type=subscription.created&limit=2&after=${first.body.data.next_cursor}`);
    expect(second.body.data.items.map((e: { event_id: string }) => e.event_id)).toEqual(created.slice(2));
    expect(second.body.data.has_more).toBe(false);
    // Caught up: the same cursor comes back, ready for the next poll.
    const third = await list(staff, `?event_type=subscription.created&after=${second.body.data.next_cursor}`);
    expect(third.body.data).toEqual({ items: [], next_cursor: second.body.data.next_cursor, has_more: false });
  });

  it('never pages past an event whose transaction is still open', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const knex = svc.orm.em.getConnection().getKnex();
    const slow = event(staff, 'subscription.created');
    const quick = event(staff, 'subscription.signed');
    const trx = await knex.transaction();
    try {
      await publish([slow], trx); // takes the lower seq, commits last
      await publish([quick], knex);
      const during = await list(staff);
      expect(during.body.data.items).toEqual([]);
      await trx.commit();
    } catch (err) {
      await trx.rollback();
      throw err;
    }
    // Visible once no older transaction of this database is open.
    const ids = (r: Awaited<ReturnType<typeof list>>) =>
      r.body.data.items.map((e: { event_id: string }) => e.event_id) as string[];
    const after = await until('the events once both transactions committed', async () => {
      const r = await list(staff);
      return ids(r).length ? r : undefined;
    });
    expect(ids(after)).toEqual([slow.id, quick.id]);
  });

  it('lists a new event while a transaction in another database of the server stays open', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    // Another database on the same PostgreSQL server (another service, a report, a migration) with a
    // transaction that has written and stays open: it can write none of this database's events.
    const other = new URL(ownerUrlOf(svc.config.DATABASE_URL));
    other.pathname = '/postgres';
    const client = new PgClient({ connectionString: other.toString(), connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      await client.query('begin');
      await client.query('select pg_current_xact_id()');
      const e = event(staff, 'subscription.created');
      await publish([e]);
      const listed = await until(
        'the event to be listable',
        async () => {
          const r = await list(staff);
          return r.body.data.items.length ? r : undefined;
        },
        { timeoutMs: 5_000 },
      );
      expect(listed.body.data.items.map((i: { event_id: string }) => i.event_id)).toEqual([e.id]);
    } finally {
      await client.query('rollback');
      await client.end();
    }
  });

  it('refuses a cursor it did not issue, an unknown type, and investors', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const bad = await list(staff, '?after=bm90LWEtY3Vyc29y');
    expect([bad.status, bad.body.error.code]).toEqual([400, 'INVALID_CURSOR']);
    const unknown = await list(staff, '?event_type=nope.nothing');
    expect([unknown.status, unknown.body.error.code]).toEqual([400, 'UNKNOWN_EVENT_TYPE']);
    const tooMany = await list(staff, '?limit=101');
    expect(tooMany.status).toBe(422);
    const investor = await actor(svc, staff.orgId, ['investor']);
    expect((await list(investor)).status).toBe(403);
    expect((await api.get('/notifications/events')).status).toBe(401);
  });
});
