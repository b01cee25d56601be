import { randomUUID } from 'node:crypto';
import { claimAttempts } from '../../webhooks/deliveries/attempt-store';
import { deliveryIdFor } from './support/delivery-id';
import { deliveryWorkflowId } from '../../domain/webhook-messages';
import { actor, approveKyc, newOrg, openOffering, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import type { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';
import { until } from '../support/wait';
import { PATHS, registerHook } from './support/hooks';
import { publish, publishUnqueued } from './support/publish';

describe.each(['A', 'B'] as const)('Set %s: signed deliveries on the real stack (spec §6)', (set) => {
  let svc: TestService;
  let api: ReturnType<typeof http>;
  let receiver: Receiver;
  let staff: Actor;
  const hook = () => `h-${randomUUID().slice(0, 8)}`;
  const delivery = (id: string) => api.get(`${PATHS[set].deliveries}/${id}`, staff.token).then((r) => r.body.data);
  const statusIs = (id: string, status: string) =>
    until(`delivery ${status}`, async () => ((await delivery(id))?.status === status ? delivery(id) : undefined));
  /** The endpoints an event's deliveries were planned for, once its fan-out is done (dispatched). */
  const plannedFor = async (eventId: string): Promise<string[]> => {
    const knex = svc.orm.em.getConnection().getKnex();
    await until(`event ${eventId} dispatched`, () =>
      knex('events').where({ id: eventId }).whereNotNull('dispatched_at').first(),
    );
    return (await knex('webhook_deliveries').where({ event_id: eventId }).pluck('endpoint_id')).sort();
  };
  const ping = async (endpointId: string) =>
    (await api.post(`${PATHS[set].endpoints}/${endpointId}/test`, staff.token)).body.data;

  beforeAll(async () => {
    ({ svc, receiver, api, staff } = await startWebhookStack(set));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  it('sends test.ping to that endpoint only, with the exact §6.3 body and headers, verifiably signed', async () => {
    const [a, b] = [hook(), hook()];
    const target = await registerHook(svc, receiver, staff, a, ['subscription.created']);
    const other = await registerHook(svc, receiver, staff, b, ['*']);
    const res = await api.post(`${PATHS[set].endpoints}/${target.id}/test`, staff.token);
    expect(res.status).toBe(202);
    const { event_id, delivery_id } = res.body.data;
    expect(delivery_id).toBe(deliveryIdFor(event_id, target.id));

    const [got] = await receiver.waitFor(a, 1);
    expect(got!.verified).toBe(true);
    const body = JSON.parse(got!.body);
    expect(Object.keys(body)).toEqual(['event_id', 'event_type', 'source', 'org_id', 'version', 'timestamp', 'data']);
    expect(body).toMatchObject({
      event_id,
      event_type: 'test.ping',
      source: 'service.notifications',
      org_id: staff.orgId,
      version: '1',
    });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
    expect(got!.headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-signature': expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
      'x-service-event-type': 'test.ping',
      'x-service-event-id': event_id,
      'x-service-delivery-id': delivery_id,
      'x-service-timestamp': body.timestamp,
      'user-agent': 'Service-Webhooks/1.0',
    });
    const done = await statusIs(delivery_id, 'success');
    expect(done.attempts).toEqual([
      {
        number: 1,
        attempted_at: expect.any(String),
        duration_ms: expect.any(Number),
        response_status: 200,
        response_body: '{"received":true}',
        error: null,
        request_headers: expect.any(Object),
      },
    ]);
    expect(sentAsStored(done.attempts[0].request_headers, got!.headers)).toBe(true);
    // The event's deliveries, planned once it is dispatched: the target's alone, none for the other endpoint.
    const planned = await plannedFor(event_id);
    expect(planned).toEqual([target.id]);
    expect(planned).not.toContain(other.id);
    expect(await receiver.received(b)).toEqual([]);
  });

  it('fans a subscription event out to every matching endpoint of the organisation, and to no other', async () => {
    const [exact, star, other, foreign] = [hook(), hook(), hook(), hook()];
    const org = newOrg();
    const orgStaff = await actor(svc, org, ['staff']);
    const investor = await actor(svc, org, ['investor'], { kycCompleted: true });
    await approveKyc(svc, investor);
    const exactHook = await registerHook(svc, receiver, orgStaff, exact, ['subscription.created']);
    const starHook = await registerHook(svc, receiver, orgStaff, star, ['*']);
    await registerHook(svc, receiver, orgStaff, other, ['subscription.approved']);
    await registerHook(svc, receiver, await actor(svc, newOrg(), ['staff']), foreign, ['*']);
    const offering = await openOffering(svc, orgStaff);
    const created = await api.post(`/issuance/offerings/${offering.offeringId}/subscriptions`, investor.token, {
      securityClassId: offering.securityClassId,
      unitsSubscribed: 2,
    });
    expect(created.status).toBe(201);

    for (const h of [exact, star]) {
      const [got] = await receiver.waitFor(h, 1);
      expect(got!.verified).toBe(true);
      expect(JSON.parse(got!.body)).toMatchObject({
        event_type: 'subscription.created',
        source: 'service.issuance',
        org_id: org,
        data: { id: created.body.data.id },
      });
    }
    const [fromExact, fromStar] = [(await receiver.received(exact))[0]!, (await receiver.received(star))[0]!];
    expect(fromExact.headers['x-service-event-id']).toBe(fromStar.headers['x-service-event-id']);
    expect(fromExact.headers['x-service-delivery-id']).not.toBe(fromStar.headers['x-service-delivery-id']);
    // The fan-out is done (the event dispatched) and planned these two alone: nothing is on its way elsewhere.
    expect(await plannedFor(fromExact.headers['x-service-event-id']!)).toEqual([exactHook.id, starHook.id].sort());
    expect(await receiver.received(other)).toEqual([]);
    expect(await receiver.received(foreign)).toEqual([]);
  });

  it('drops an event type outside the supported list silently: stored, planned, no delivery', async () => {
    const h = hook();
    await registerHook(svc, receiver, staff, h, ['*']);
    const internal = set === 'A' ? 'shares.issued' : 'subscription.internal_audit';
    const event = {
      id: randomUUID(),
      type: internal,
      source: 'service.issuance',
      orgId: staff.orgId,
      occurredAt: new Date().toISOString(),
      data: {},
    };
    const published = await publish(svc, [event]);
    expect(published).toEqual({ eventIds: [event.id], deliveries: [] });
    const knex = svc.orm.em.getConnection().getKnex();
    expect((await knex('events').where({ id: event.id }).first()).dispatched_at).not.toBeNull();
    expect(await knex('webhook_deliveries').where({ event_id: event.id })).toEqual([]);
    expect(await receiver.received(h)).toEqual([]);
  });

  it('retries a failed delivery now on request, same event and delivery id, then refuses to retry a success with 409', async () => {
    const h = hook();
    const endpoint = await registerHook(svc, receiver, staff, h, ['*'], { responses: [500] });
    const { delivery_id } = await ping(endpoint.id);
    const failed = await statusIs(delivery_id, 'failed');
    expect(failed.attempts).toMatchObject([{ number: 1, response_status: 500 }]);
    // spec §6.5: the next automatic attempt is 30 s after the first.
    const wait = Date.parse(failed.next_attempt_at) - Date.parse(failed.attempts[0].attempted_at);
    expect(wait).toBeGreaterThanOrEqual(30_000);
    expect(wait).toBeLessThan(32_000);

    const retried = await api.post(`${PATHS[set].deliveries}/${delivery_id}/retry`, staff.token);
    expect(retried.status).toBe(202);
    const both = await receiver.waitFor(h, 2, 10_000);
    expect(both[1]!.at - both[0]!.at).toBeLessThan(20_000);
    expect(both.map((d) => [d.verified, d.headers['x-service-event-id'], d.headers['x-service-delivery-id']])).toEqual([
      [true, both[0]!.headers['x-service-event-id'], delivery_id],
      [true, both[0]!.headers['x-service-event-id'], delivery_id],
    ]);
    const done = await statusIs(delivery_id, 'success');
    expect(
      done.attempts.map((a: { number: number; response_status: number }) => [a.number, a.response_status]),
    ).toEqual([
      [1, 500],
      [2, 200],
    ]);
    // Each attempt keeps the headers it was sent with: attempt 1 by the dispatcher, attempt 2 by
    // the delivery workflow's activity (webhook-timestamp and webhook-signature are made at each send).
    expect(
      done.attempts.map((a: { request_headers: Record<string, string> | null }, i: number) =>
        sentAsStored(a.request_headers, both[i]!.headers),
      ),
    ).toEqual([true, true]);
    expect(JSON.stringify(done)).not.toContain(endpoint.secret.slice(6));
    const again = await api.post(`${PATHS[set].deliveries}/${delivery_id}/retry`, staff.token);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('DELIVERY_SUCCEEDED');
  });

  /** Recorded, yet in no queue: what a batch lost by an earlier engine left behind. */
  async function stuckPendingDelivery(h: string): Promise<string> {
    const endpoint = await registerHook(svc, receiver, staff, h, ['*']);
    const event = {
      id: randomUUID(),
      type: 'subscription.approved',
      source: 'service.issuance',
      orgId: staff.orgId,
      occurredAt: new Date().toISOString(),
      data: { id: randomUUID() },
    };
    const published = await publishUnqueued(svc, [event], [{ eventId: event.id, endpointId: endpoint.id }]);
    const deliveryId = deliveryIdFor(event.id, endpoint.id);
    expect(published.deliveries).toEqual([{ eventId: event.id, endpointId: endpoint.id, deliveryId }]);
    return deliveryId;
  }

  it('delivers a stuck pending delivery on a manual retry, as attempt 1', async () => {
    const h = hook();
    const deliveryId = await stuckPendingDelivery(h);
    expect(await delivery(deliveryId)).toMatchObject({ status: 'pending', attempt_count: 0 });

    expect((await api.post(`${PATHS[set].deliveries}/${deliveryId}/retry`, staff.token)).status).toBe(202);
    const done = await statusIs(deliveryId, 'success');
    expect(done).toMatchObject({ attempt_count: 1 });
    expect(
      done.attempts.map((a: { number: number; response_status: number }) => [a.number, a.response_status]),
    ).toEqual([[1, 200]]);
    const [got] = await receiver.waitFor(h, 1);
    expect(got!.headers['x-service-delivery-id']).toBe(deliveryId);
  });

  it('numbers a manual retry after an attempt whose batch died before its result', async () => {
    const deliveryId = await stuckPendingDelivery(hook());
    // Attempt 1 claimed by a batch whose worker died before the result: the row has no outcome yet.
    await claimAttempts(svc.orm.em.getConnection().getKnex(), [
      { deliveryId, number: 1, attemptedAt: new Date().toISOString(), nextDelayMs: 30_000, owner: 'lost-batch/1' },
    ]);
    expect(await delivery(deliveryId)).toMatchObject({ status: 'pending', attempt_count: 0 });

    expect((await api.post(`${PATHS[set].deliveries}/${deliveryId}/retry`, staff.token)).status).toBe(202);
    const done = await statusIs(deliveryId, 'success');
    expect(done).toMatchObject({ attempt_count: 2 });
    expect(
      done.attempts.map((a: { number: number; response_status: number | null }) => [a.number, a.response_status]),
    ).toEqual([
      [1, null],
      [2, 200],
    ]);
  });

  it('signs the attempt after a rotation with the new secret', async () => {
    const h = hook();
    const endpoint = await registerHook(svc, receiver, staff, h, ['*'], { responses: [500] });
    const { delivery_id } = await ping(endpoint.id);
    await statusIs(delivery_id, 'failed');
    const rotated = await api.post(`${PATHS[set].endpoints}/${endpoint.id}/rotate-secret`, staff.token);
    await receiver.plan(h, { secret: rotated.body.data.signing_secret });
    await api.post(`${PATHS[set].deliveries}/${delivery_id}/retry`, staff.token);
    const [first, second] = await receiver.waitFor(h, 2, 10_000);
    expect(first!.headers['x-service-signature']).not.toBe(second!.headers['x-service-signature']);
    expect(second!.verified).toBe(true);
    await statusIs(delivery_id, 'success');
  });

  it("ends a deleted endpoint's pending delivery without further attempts", async () => {
    const h = hook();
    const endpoint = await registerHook(svc, receiver, staff, h, ['*'], { defaultStatus: 503 });
    const { delivery_id } = await ping(endpoint.id);
    await statusIs(delivery_id, 'failed');
    const handle = svc.temporal.workflow.getHandle(deliveryWorkflowId(delivery_id));
    await until(
      'delivery workflow started',
      () =>
        handle.describe().then(
          () => true,
          () => undefined,
        ),
      { timeoutMs: 10_000 },
    );
    expect((await api.delete(`${PATHS[set].endpoints}/${endpoint.id}`, staff.token)).status).toBe(204);
    expect(await handle.result()).toBe('endpoint_deleted');
    // The cleanup signals the workflow first, then stops the delivery's schedule in the database
    // (webhooks/endpoints/deleted-endpoints.ts): the workflow's end may be seen a moment before the row's.
    const after = await until('delivery no longer scheduled', async () => {
      const d = await delivery(delivery_id);
      return d.next_attempt_at === null ? d : undefined;
    });
    expect(after).toMatchObject({ status: 'failed', attempt_count: 1, next_attempt_at: null });
    expect((await api.post(`${PATHS[set].deliveries}/${delivery_id}/retry`, staff.token)).body.error.code).toBe(
      'ENDPOINT_DELETED',
    );
    expect(await receiver.received(h)).toHaveLength(1);
  });

  it('lists deliveries by endpoint_id, status and event_type, with cursor paging', async () => {
    const own = await actor(svc, newOrg(), ['admin']);
    const [h1, h2] = [hook(), hook()];
    const e1 = await registerHook(svc, receiver, own, h1, ['*']);
    const e2 = await registerHook(svc, receiver, own, h2, ['*'], { defaultStatus: 500 });
    const pings = [];
    for (const e of [e1, e1, e1, e2])
      pings.push((await api.post(`${PATHS[set].endpoints}/${e.id}/test`, own.token)).body.data.delivery_id);
    await receiver.waitFor(h1, 3);
    await receiver.waitFor(h2, 1);
    const list = (q: string) => api.get(`${PATHS[set].deliveries}?${q}`, own.token).then((r) => r.body.data);
    await until('failed listed', async () => ((await list(`status=failed`)).items.length === 1 ? true : undefined), {
      timeoutMs: 15_000,
    });

    const byEndpoint = await list(`endpoint_id=${e1.id}&event_type=test.ping&status=success&limit=2`);
    expect(byEndpoint.items.map((d: { id: string }) => d.id)).toEqual([pings[2], pings[1]]);
    expect(byEndpoint.items[0]).toMatchObject({
      endpoint_id: e1.id,
      event_type: 'test.ping',
      status: 'success',
      attempt_count: 1,
    });
    const rest = await list(`endpoint_id=${e1.id}&limit=2&cursor=${byEndpoint.next_cursor}`);
    expect(rest).toEqual({ items: [expect.objectContaining({ id: pings[0] })], next_cursor: null });
    expect((await list(`status=failed`)).items.map((d: { id: string }) => d.id)).toEqual([pings[3]]);
    expect((await list(`event_type=subscription.created`)).items).toEqual([]);
    expect((await api.get(`${PATHS[set].deliveries}?status=bogus`, own.token)).status).toBe(422);
    expect((await api.get(`${PATHS[set].deliveries}/${pings[0]}`, staff.token)).status).toBe(404);
  });

  it('pages through one event fanned out to many endpoints without losing a delivery', async () => {
    const own = await actor(svc, newOrg(), ['admin']);
    const hooks = Array.from({ length: 5 }, hook);
    for (const h of hooks) await registerHook(svc, receiver, own, h, ['*']);
    const event = {
      id: randomUUID(),
      type: 'subscription.created',
      source: 'service.issuance',
      orgId: own.orgId,
      occurredAt: new Date().toISOString(),
      data: { id: randomUUID() },
    };
    await publish(svc, [event]);
    const knex = svc.orm.em.getConnection().getKnex();
    const made = await until(
      'fanned out',
      async () => {
        const rows: { id: string }[] = await knex('webhook_deliveries').where({ event_id: event.id }).select('id');
        return rows.length === hooks.length ? rows.map((r) => r.id).sort() : undefined;
      },
      { timeoutMs: 15_000 },
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: any } = await api.get(
        `${PATHS[set].deliveries}?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        own.token,
      );
      seen.push(...res.body.data.items.map((d: { id: string }) => d.id));
      cursor = res.body.data.next_cursor;
    } while (cursor && seen.length < 20);
    expect(seen.sort()).toEqual(made);
  });
});

/**
 * The headers an attempt stored are exactly the ones the endpoint received (names as sent, the
 * receiver's lowercased), the spec §6.3 seven and the Standard Webhooks three, in the order sent.
 */
function sentAsStored(stored: Record<string, string> | null, received: Record<string, string>): boolean {
  expect(Object.keys(stored ?? {})).toEqual([
    'Content-Type',
    'X-Service-Signature',
    'X-Service-Event-Type',
    'X-Service-Event-Id',
    'X-Service-Delivery-Id',
    'X-Service-Timestamp',
    'User-Agent',
    'webhook-id',
    'webhook-timestamp',
    'webhook-signature',
  ]);
  for (const [name, value] of Object.entries(stored!))
    expect([name, received[name.toLowerCase()]]).toEqual([name, value]);
  return true;
}
