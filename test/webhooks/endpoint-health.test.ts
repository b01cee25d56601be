import { disableEndpoint as disable, noteAttemptOutcomes } from '../../webhooks/endpoints/endpoint-health-store';
import type { DisableReason } from '../../domain/endpoint-health';
import { ENDPOINT_DISABLED } from '../../domain/events';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { PATHS, registerHook } from './support/hooks';
import type { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';
import { until } from '../support/wait';
import { anEvent, publish as publishTo } from './support/publish';

const DAY = 24 * 3600_000;

describe.each(['A', 'B'] as const)('Set %s: endpoint status and health', (set) => {
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;
  let api: ReturnType<typeof http>;
  const base = PATHS[set].endpoints;
  const deliveries = PATHS[set].deliveries;
  const knex = () => svc.orm.em.getConnection().getKnex();

  beforeAll(async () => {
    ({ svc, receiver, api } = await startWebhookStack(set));
  });
  // Each test its own organisation: an endpoint.disabled event goes to every other endpoint of it.
  beforeEach(async () => (staff = await actor(svc, newOrg(), ['staff'])));
  const disableEndpoint = (_: unknown, id: string, reason: DisableReason) => disable(knex(), set, id, reason);
  /** One answer of the endpoint, as the recorder notes it: answers the reason when it disabled the endpoint. */
  const noteAttemptOutcome = (id: string, outcome: { status: number | null; at: Date }) =>
    knex().transaction(async (trx) => {
      const disabled = (
        await noteAttemptOutcomes(trx, { set, failingPeriodMs: 5 * DAY, failingAfterAttempts: 5 }, [
          { endpointId: id, ...outcome },
        ])
      ).get(id);
      if (disabled) await disable(trx, set, id, disabled.reason, disabled.at);
      return disabled?.reason ?? null;
    });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  const hook = (name: string, plan: { responses?: number[] } = {}) =>
    registerHook(svc, receiver, staff, `${set}-${name}`, ['*'], plan);
  const received = (name: string) => receiver.received(`${set}-${name}`);
  const publish = async () => {
    const event = anEvent(staff.orgId);
    await publishTo(svc, [event]);
    return event.id;
  };
  /** The endpoints the fan-out recorded a delivery for: decided in one transaction, so no waiting for absence. */
  const deliveredTo = (eventId: string) =>
    until(`fan-out of ${eventId}`, async () => {
      const [ev] = await knex()('events').where({ id: eventId }).whereNotNull('dispatched_at').select('id');
      if (!ev) return undefined;
      return (await knex()('webhook_deliveries').where({ event_id: eventId }).pluck('endpoint_id')).sort();
    });

  it('shows the recent success rate of the endpoint’s attempts', async () => {
    const h = await hook('rate', { responses: [500] });
    await api.post(`${base}/${h.id}/test`, staff.token);
    await receiver.waitFor(`${set}-rate`, 1);
    await api.post(`${base}/${h.id}/test`, staff.token);
    await receiver.waitFor(`${set}-rate`, 2);
    const rate = await until("a success counted in the endpoint's success rate", async () => {
      const r = (await api.get(`${base}/${h.id}`, staff.token)).body.data.success_rate;
      return r.succeeded >= 1 ? r : undefined;
    });
    expect(rate).toMatchObject({ window_hours: 24 });
    expect(rate.attempts - rate.succeeded).toBeGreaterThanOrEqual(1); // the 500
    expect(rate.rate).toBeCloseTo(rate.succeeded / rate.attempts, 4);
    const listed = (await api.get(base, staff.token)).body.data.items.find((e: { id: string }) => e.id === h.id);
    expect(listed.success_rate.attempts).toBeGreaterThanOrEqual(2);
  });

  it('disables an endpoint, tells the organisation’s endpoints that name the event type, and delivers nothing more to it', async () => {
    const gone = await hook('gone');
    const other = await registerHook(svc, receiver, staff, `${set}-other`, [
      ENDPOINT_DISABLED,
      'subscription.approved',
    ]);
    expect(await disableEndpoint(svc, gone.id, 'gone')).toBe(true);
    expect(await disableEndpoint(svc, gone.id, 'gone')).toBe(false); // a second 410 changes nothing

    const record = (await api.get(`${base}/${gone.id}`, staff.token)).body.data;
    expect(record).toMatchObject({ status: 'disabled', disabled_reason: 'gone', disabled_at: expect.any(String) });

    const [notice] = await receiver.waitFor(`${set}-other`, 1);
    const body = JSON.parse(notice!.body);
    expect(body).toMatchObject({
      event_type: ENDPOINT_DISABLED,
      org_id: staff.orgId,
      version: '1',
      data: { endpoint_id: gone.id, reason: 'gone' },
    });
    expect(notice!.verified).toBe(true);
    expect(await deliveredTo(body.event_id)).toEqual([other.id]);
    expect(await knex()('events').where({ org_id: staff.orgId, type: ENDPOINT_DISABLED }).pluck('id')).toHaveLength(1);

    expect(await deliveredTo(await publish())).toEqual([other.id]);
    const ping = await api.post(`${base}/${gone.id}/test`, staff.token);
    expect(ping.status).toBe(409);
    expect(ping.body.error.code).toBe('ENDPOINT_DISABLED');
    expect(await received('gone')).toEqual([]);
  });

  it('never sends webhook.endpoint.disabled through `*`, only to endpoints that name it (not in spec §6.2)', async () => {
    const star = await hook('star');
    const named = await registerHook(svc, receiver, staff, `${set}-named`, [ENDPOINT_DISABLED]);
    const victim = await hook('victim');
    expect((await api.patch(`${base}/${victim.id}`, staff.token, { status: 'disabled' })).status).toBe(200);
    const [notice] = await receiver.waitFor(`${set}-named`, 1);
    const body = JSON.parse(notice!.body);
    expect(body).toMatchObject({ event_type: ENDPOINT_DISABLED, data: { endpoint_id: victim.id } });
    expect(await deliveredTo(body.event_id)).toEqual([named.id]);
    expect(await received('star')).toEqual([]);
    expect(star.id).not.toBe(named.id);
  });

  it('re-enables a disabled endpoint with PATCH; deliveries reach it again', async () => {
    const h = await hook('reenable');
    await disableEndpoint(svc, h.id, 'failing');
    const res = await api.patch(`${base}/${h.id}`, staff.token, { status: 'enabled' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'enabled', disabled_reason: null, disabled_at: null });
    expect(await deliveredTo(await publish())).toContain(h.id);
    await receiver.waitFor(`${set}-reenable`, 1);
  });

  it('disables by hand with PATCH (reason manual) and refuses a status it does not know', async () => {
    const h = await hook('manual');
    const res = await api.patch(`${base}/${h.id}`, staff.token, { status: 'disabled' });
    expect(res.body.data).toMatchObject({ status: 'disabled', disabled_reason: 'manual' });
    const bad = await api.patch(`${base}/${h.id}`, staff.token, { status: 'paused' });
    expect(bad.status).toBe(422);
  });

  it('refuses a manual retry of a delivery whose endpoint is disabled', async () => {
    const h = await hook('retry-disabled', { responses: [500] });
    const { delivery_id } = (await api.post(`${base}/${h.id}/test`, staff.token)).body.data;
    await until(`delivery ${delivery_id} failed`, async () =>
      (await api.get(`${deliveries}/${delivery_id}`, staff.token)).body.data?.status === 'failed' ? true : undefined,
    ); // 404 until the fan-out records it
    await disableEndpoint(svc, h.id, 'manual');
    const res = await api.post(`${deliveries}/${delivery_id}/retry`, staff.token);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('ENDPOINT_DISABLED');
  });

  it('noteAttemptOutcome: a 410 disables at once; failing for the period disables; a success in between resets', async () => {
    const g = await hook('note-410');
    expect(await noteAttemptOutcome(g.id, { status: 410, at: new Date() })).toBe('gone');

    const f = await hook('note-failing');
    const t0 = new Date('2026-11-01T00:00:00Z');
    const at = (ms: number) => new Date(t0.getTime() + ms);
    expect(await noteAttemptOutcome(f.id, { status: 500, at: t0 })).toBeNull();
    expect(await noteAttemptOutcome(f.id, { status: null, at: at(3 * DAY) })).toBeNull();
    expect(await noteAttemptOutcome(f.id, { status: 200, at: at(4 * DAY) })).toBeNull(); // reset
    expect(await noteAttemptOutcome(f.id, { status: 500, at: at(5 * DAY) })).toBeNull();
    expect(await noteAttemptOutcome(f.id, { status: 503, at: at(10 * DAY - 1) })).toBeNull();
    expect(await noteAttemptOutcome(f.id, { status: 500, at: at(10 * DAY) })).toBe('failing');
    expect((await api.get(`${base}/${f.id}`, staff.token)).body.data).toMatchObject({
      status: 'disabled',
      disabled_reason: 'failing',
    });
  });
});
