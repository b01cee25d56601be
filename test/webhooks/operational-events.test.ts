import { DELIVERY_EXHAUSTED, ENDPOINT_FAILING, ENDPOINT_RECOVERED } from '../../domain/events';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { PATHS, registerHook } from './support/hooks';
import type { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';
import { until } from '../support/wait';
import { noteAttemptOutcomes } from '../../webhooks/endpoints/endpoint-health-store';
import { missingCount } from '../../webhooks/events/missing-events';

/** The threshold this file runs with: 3 failed attempts in a row publish `webhook.endpoint.failing`. */
const FAILING_AFTER = 3;

/**
 * The operational events of docs/decisions/0415-operational-events.md on the real stack, in the
 * delivery shape the environment names: `webhook.endpoint.failing` once per failing spell,
 * `webhook.endpoint.recovered` at the first success after it, each only to the organisation's other
 * endpoints that name the type: never through `*`, never to the endpoint it is about.
 */
describe.each(['A', 'B'] as const)('Set %s: operational events', (set) => {
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;
  let api: ReturnType<typeof http>;
  const base = PATHS[set].endpoints;
  const knex = () => svc.orm.em.getConnection().getKnex();

  beforeAll(async () => {
    ({ svc, receiver, api } = await startWebhookStack(set, { WEBHOOK_FAILING_AFTER_ATTEMPTS: String(FAILING_AFTER) }));
  });
  beforeEach(async () => (staff = await actor(svc, newOrg(), ['staff'])));
  afterAll(() => stopWebhookStack({ svc, receiver }));

  const hook = (name: string, eventTypes: string[], plan: { responses?: number[] } = {}) =>
    registerHook(svc, receiver, staff, `${set}-${name}`, eventTypes, plan);
  const bodies = async (name: string) =>
    (await receiver.received(`${set}-${name}`)).map((r) => JSON.parse(r.body) as Record<string, any>);
  const eventsOf = (type: string) => knex()('events').where({ org_id: staff.orgId, type }).orderBy('seq');
  /** The endpoints the fan-out recorded a delivery for: decided in the publishing transaction. */
  const deliveredTo = async (eventId: string) =>
    (await knex()('webhook_deliveries').where({ event_id: eventId }).pluck('endpoint_id')).sort();
  /** The endpoint's attempts with their result recorded. */
  const recorded = (endpointId: string) =>
    knex()('webhook_attempts as a')
      .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .where('d.endpoint_id', endpointId)
      .whereNotNull('a.duration_ms')
      .select('a.response_status');
  const ping = async (endpointId: string) =>
    expect((await api.post(`${base}/${endpointId}/test`, staff.token)).status).toBe(202);

  it('publishes one failing at the threshold, none for the failures after it, and one recovered at the next success', async () => {
    const named = await hook('named', [ENDPOINT_FAILING, ENDPOINT_RECOVERED]);
    const star = await hook('star', ['*']);
    // It names the types itself: it still never hears about itself.
    const flaky = await hook('flaky', [ENDPOINT_FAILING, ENDPOINT_RECOVERED, 'subscription.approved'], {
      responses: [500, 500, 500, 500, 500],
    });

    for (let i = 1; i <= FAILING_AFTER + 2; i++) {
      await ping(flaky.id);
      await until(
        `${i} failed attempts recorded`,
        () => recorded(flaky.id),
        (rows) => rows.length >= i,
      );
    }
    const [failing] = await receiver.waitFor(`${set}-named`, 1);
    const notice = JSON.parse(failing!.body);
    expect(failing!.verified).toBe(true);
    expect(notice).toMatchObject({
      event_type: ENDPOINT_FAILING,
      org_id: staff.orgId,
      data: { endpoint_id: flaky.id, failed_attempts: FAILING_AFTER, last_response_status: 500 },
    });
    expect(Date.parse(notice.data.failing_since)).not.toBeNaN();
    expect(notice.data).not.toHaveProperty('url');
    expect(await deliveredTo(notice.event_id)).toEqual([named.id]);
    // Five failures in a row, threshold three: one event for the spell.
    expect(await eventsOf(ENDPOINT_FAILING)).toHaveLength(1);

    await receiver.plan(`${set}-flaky`, { secret: flaky.secret, defaultStatus: 200 });
    await ping(flaky.id);
    const [, back] = await receiver.waitFor(`${set}-named`, 2);
    const recovered = JSON.parse(back!.body);
    expect(recovered).toMatchObject({
      event_type: ENDPOINT_RECOVERED,
      data: { endpoint_id: flaky.id, failing_since: notice.data.failing_since },
    });
    expect(Date.parse(recovered.data.recovered_at)).toBeGreaterThanOrEqual(Date.parse(notice.data.failing_since));
    expect(await deliveredTo(recovered.event_id)).toEqual([named.id]);

    // More successes (the retries of the failed pings, another ping) publish nothing more.
    await ping(flaky.id);
    await until(
      'two successes recorded',
      () => recorded(flaky.id),
      (rows) => rows.filter((r) => r.response_status === 200).length >= 2,
    );
    expect(await eventsOf(ENDPOINT_RECOVERED)).toHaveLength(1);
    expect(await eventsOf(ENDPOINT_FAILING)).toHaveLength(1);
    expect((await bodies('named')).map((b) => b.event_type)).toEqual([ENDPOINT_FAILING, ENDPOINT_RECOVERED]);
    expect(await bodies('star')).toEqual([]);
    expect((await bodies('flaky')).every((b) => b.event_type === 'test.ping')).toBe(true);
    expect(star.id).not.toBe(named.id);
    // A replay of what it missed (docs/decisions/0396-replay-missing.md) does not send it news of itself either.
    const window = { since: new Date(Date.now() - 3_600_000), until: new Date(), set };
    expect(await missingCount(knex(), { endpointId: flaky.id, ...window })).toBe(0);
    expect(await missingCount(knex(), { endpointId: named.id, ...window })).toBe(0);
  });

  it('publishes nothing for failures under the threshold, and no recovered after them', async () => {
    await hook('quiet-named', [ENDPOINT_FAILING, ENDPOINT_RECOVERED, DELIVERY_EXHAUSTED]);
    const flaky = await hook('blip', ['subscription.approved'], { responses: Array(FAILING_AFTER - 1).fill(500) });
    for (let i = 1; i <= FAILING_AFTER - 1; i++) {
      await ping(flaky.id);
      await until(
        `${i} failed attempts recorded`,
        () => recorded(flaky.id),
        (rows) => rows.length >= i,
      );
    }
    await ping(flaky.id);
    await until(
      'a success recorded',
      () => recorded(flaky.id),
      (rows) => rows.some((r) => r.response_status === 200),
    );
    const [row] = await knex()('webhook_endpoints').where({ id: flaky.id }).select('failing_attempts', 'failing_since');
    expect(row).toEqual({ failing_attempts: 0, failing_since: null });
    expect(await eventsOf(ENDPOINT_FAILING)).toEqual([]);
    expect(await eventsOf(ENDPOINT_RECOVERED)).toEqual([]);
    expect(await bodies('quiet-named')).toEqual([]);
  });

  it('still counts "failing since" for an endpoint re-enabled while its spell is reported, so it can be disabled again', async () => {
    const DAY = 86_400_000;
    const ep = await hook('reenabled', ['subscription.approved']);
    const note = (status: number, at: Date) =>
      knex().transaction(async (trx) =>
        (
          await noteAttemptOutcomes(trx, { set, failingPeriodMs: DAY, failingAfterAttempts: 1 }, [
            { endpointId: ep.id, status, at },
          ])
        ).get(ep.id),
      );
    const t0 = new Date(Date.now() - 3 * DAY);
    expect(await note(500, t0)).toBeUndefined();
    expect(await eventsOf(ENDPOINT_FAILING)).toHaveLength(1); // reported at once: the threshold is 1
    for (const status of ['disabled', 'enabled'])
      expect((await api.patch(`${base}/${ep.id}`, staff.token, { status })).status).toBe(200);

    const t1 = new Date(t0.getTime() + DAY);
    expect(await note(500, t1)).toBeUndefined();
    const [row] = await knex()('webhook_endpoints').where({ id: ep.id }).select('failing_since');
    expect(new Date(row.failing_since).toISOString()).toBe(t1.toISOString());
    expect(await note(500, new Date(t1.getTime() + DAY))).toMatchObject({ reason: 'failing' });
    expect(await eventsOf(ENDPOINT_FAILING)).toHaveLength(1); // the same spell: not reported twice
  });

  it("ends a reported spell inside the results' transaction too (a batch that is not all successes), once", async () => {
    await hook('mixed-named', [ENDPOINT_FAILING, ENDPOINT_RECOVERED]);
    const ep = await hook('mixed', ['subscription.approved']);
    const note = (observed: { status: number; at: Date; slow?: boolean }[]) =>
      knex().transaction((trx) =>
        noteAttemptOutcomes(
          trx,
          { set, failingPeriodMs: 86_400_000, failingAfterAttempts: 2 },
          observed.map((o) => ({ endpointId: ep.id, ...o })),
        ),
      );
    const t0 = new Date(Date.now() - 60_000);
    const at = (s: number) => new Date(t0.getTime() + s * 1000);
    await note([{ status: 503, at: at(0) }]);
    expect(await eventsOf(ENDPOINT_FAILING)).toEqual([]);
    // A slow 2xx counts as a failure (domain/circuit-breaker.ts, tooSlow): the second in a row.
    await note([{ status: 200, at: at(1), slow: true }]);
    const [failing] = await eventsOf(ENDPOINT_FAILING);
    expect(failing.data).toEqual({
      endpoint_id: ep.id,
      failing_since: at(0).toISOString(),
      failed_attempts: 2,
      last_response_status: 200,
    });
    await note([{ status: 200, at: at(2) }]);
    await note([{ status: 200, at: at(3) }]);
    const recovered = await eventsOf(ENDPOINT_RECOVERED);
    expect(recovered.map((e) => e.data)).toEqual([
      { endpoint_id: ep.id, failing_since: at(0).toISOString(), recovered_at: at(2).toISOString() },
    ]);
    // Published a few ms apart, each its own delivery: they may arrive in either order.
    const notices = await receiver.waitFor(`${set}-mixed-named`, 2);
    expect(notices.map((n) => JSON.parse(n.body).event_type).sort()).toEqual([ENDPOINT_FAILING, ENDPOINT_RECOVERED]);
    const [row] = await knex()('webhook_endpoints')
      .where({ id: ep.id })
      .select('failing_since', 'failing_attempts', 'failing_reported_at');
    expect(row).toEqual({ failing_since: null, failing_attempts: 0, failing_reported_at: null });
  });
});
