import { randomUUID } from 'node:crypto';
import type { ServiceEvent } from '../../domain/events';
import type { Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { until } from '../support/wait';
import { PATHS } from './support/hooks';
import { publish } from './support/publish';
import type { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';

const EVENTS = 500;
const SUBSCRIPTIONS = 5;
const BATCH = 60;

/**
 * Replay missing (docs/decisions/0396-replay-missing.md): an endpoint disabled while 500 events are published,
 * re-enabled and recovered with `"mode": "missing"`, receives each exactly once, in order per subscription
 * on an ordered endpoint; an endpoint registered after the events gets them the same way. Run in both
 * delivery shapes (scripts/test.sh).
 */
describe('replay missing: what an endpoint never received, delivered once it is back', () => {
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;
  let api: ReturnType<typeof http>;
  const base = PATHS.A.endpoints;

  beforeAll(async () => {
    ({ svc, receiver, api, staff } = await startWebhookStack('A', { WEBHOOK_RECOVERY_BATCH_SIZE: String(BATCH) }));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  const register = async (hook: string, body: Record<string, unknown>) => {
    const res = await api.post(base, staff.token, { url: receiver.url(hook), description: hook, ...body });
    expect(res.status).toBe(201);
    await receiver.plan(hook, { secret: res.body.data.signing_secret });
    return res.body.data.id as string;
  };
  const event = (subscriptionId: string, mark: number, type = 'subscription.approved'): ServiceEvent => ({
    id: randomUUID(),
    type,
    source: 'service.issuance',
    orgId: staff.orgId,
    occurredAt: new Date().toISOString(),
    data: { id: subscriptionId, mark },
  });
  const recover = async (endpointId: string, body: Record<string, unknown>) => {
    const path = `${base}/${endpointId}/recoveries`;
    const started = await api.post(path, staff.token, body);
    return { started, path };
  };
  const finished = (path: string, id: string) =>
    until(
      `recovery ${id} to finish`,
      async () => {
        const r = (await api.get(`${path}/${id}`, staff.token)).body.data;
        return r.status === 'completed' || r.status === 'cancelled' ? r : undefined;
      },
      { timeoutMs: 120_000 },
    );
  const arrivals = async (hook: string) =>
    (await receiver.received(hook))
      .filter((d) => d.status === 200)
      .map((d) => JSON.parse(d.body) as { event_id: string; data: { id: string; mark: number } });

  it('delivers each event missed while disabled exactly once, in order per subscription', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const ordered = await register('missing-ordered', {
      eventTypes: ['subscription.approved'],
      ordering: 'per_subscription',
    });
    const disabled = await api.patch(`${base}/${ordered}`, staff.token, { status: 'disabled' });
    expect(disabled.body.data.status).toBe('disabled');

    const subscriptions = Array.from({ length: SUBSCRIPTIONS }, () => randomUUID());
    const published: string[] = [];
    for (let from = 0; from < EVENTS; from += 50) {
      const batch = Array.from({ length: 50 }, (_, i) => event(subscriptions[(from + i) % SUBSCRIPTIONS]!, from + i));
      await publish(svc, batch);
      published.push(...batch.map((e) => e.id));
    }
    // Of a type it does not subscribe to: never planned for it.
    await publish(svc, [event(subscriptions[0]!, -1, 'subscription.rejected')]);

    expect((await api.patch(`${base}/${ordered}`, staff.token, { status: 'enabled' })).status).toBe(200);
    const { started, path } = await recover(ordered, { since, mode: 'missing' });
    expect(started.status).toBe(202);
    expect(started.body.data).toMatchObject({ mode: 'missing', status: 'running', total: EVENTS });
    expect(await finished(path, started.body.data.id)).toMatchObject({
      status: 'completed',
      total: EVENTS,
      done: EVENTS,
      skipped: 0,
    });

    await receiver.waitFor('missing-ordered', EVENTS, 120_000);
    const got = await arrivals('missing-ordered');
    expect(got).toHaveLength(EVENTS);
    expect(new Set(got.map((g) => g.event_id))).toEqual(new Set(published));
    for (const s of subscriptions) {
      const marks = got.filter((g) => g.data.id === s).map((g) => g.data.mark);
      expect(marks).toEqual([...marks].sort((a, b) => a - b));
    }

    // Again: nothing is missing any more, so nothing is sent twice.
    const again = await recover(ordered, { since, mode: 'missing' });
    expect(again.started.body.data).toMatchObject({ total: 0 });
    expect(await finished(again.path, again.started.body.data.id)).toMatchObject({ status: 'completed', done: 0 });
    await new Promise((r) => setTimeout(r, 1000));
    expect(await arrivals('missing-ordered')).toHaveLength(EVENTS);
  });

  it('delivers to an endpoint what was published before it existed, from since on', async () => {
    const before = [event(randomUUID(), 1), event(randomUUID(), 2)];
    await publish(svc, [before[0]!]);
    const since = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await publish(svc, [before[1]!]);
    const late = await register('missing-late', { eventTypes: ['*'] });

    const { started, path } = await recover(late, { since, mode: 'missing' });
    expect(started.body.data).toMatchObject({ mode: 'missing', total: 1 });
    expect(await finished(path, started.body.data.id)).toMatchObject({ status: 'completed', done: 1 });
    await receiver.waitFor('missing-late', 1);
    expect((await arrivals('missing-late')).map((g) => g.event_id)).toEqual([before[1]!.id]);
  });

  it('keeps today’s recovery the default, and refuses a missing one reaching past event retention', async () => {
    const endpoint = await register('missing-bounds', { eventTypes: ['*'] });
    const { started } = await recover(endpoint, { since: new Date(Date.now() - 60_000).toISOString() });
    expect(started.body.data).toMatchObject({ mode: 'failed', total: 0 });

    const old = new Date(Date.now() - 31 * 86_400_000).toISOString();
    await finished(`${base}/${endpoint}/recoveries`, started.body.data.id);
    const refused = await recover(endpoint, { since: old, mode: 'missing' });
    expect(refused.started.status).toBe(422);
    expect(refused.started.body.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [expect.objectContaining({ path: 'since' })],
    });
    const unknown = await recover(endpoint, { since: new Date().toISOString(), mode: 'everything' });
    expect([unknown.started.status, unknown.started.body.error.code]).toEqual([422, 'VALIDATION_FAILED']);
  });
});
