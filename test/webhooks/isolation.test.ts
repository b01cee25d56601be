import { testDataConverter } from '../support/data-converter';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { deliveryWorkflowId, orderedWorkflowId, retrySchedulerWorkflowId } from '../../domain/webhook-messages';
import { registry } from '../../lib/runtime/metrics';
import { deliveryIdFor } from './support/delivery-id';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { PATHS, registerHook } from './support/hooks';
import { anEvent, publish } from './support/publish';
import type { Receiver, ReceivedDelivery } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';
import { until } from '../support/wait';

/**
 * Per-endpoint isolation (docs/decisions/0176-per-endpoint-isolation.md) on the real stack (dispatcher, retry
 * schedulers, HTTP): each endpoint waits only on itself, a failing endpoint goes behind its circuit breaker,
 * an integrator's limits hold as the receiver counts them, one organisation's traffic never queues another's,
 * and the sweep leaves ordered deliveries alone. The engine is the same for both behaviour sets, so one set
 * is enough.
 */
describe('the delivery engine keeps endpoints and organisations apart', () => {
  const set = 'A';
  let svc: TestService;
  let receiver: Receiver;
  let api: ReturnType<typeof http>;
  const base = PATHS[set].endpoints;
  let n = 0;
  const name = (what: string) => `iso-${what}-${++n}`;

  beforeAll(async () => {
    ({ svc, receiver, api } = await startWebhookStack(set, {
      WEBHOOK_CIRCUIT_FAILURES: '3',
      WEBHOOK_CIRCUIT_COOLDOWN_SECONDS: '1',
      WEBHOOK_SWEEP_INTERVAL_MS: '300',
    }));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  const delivery = (who: Actor, id: string) =>
    api.get(`${PATHS[set].deliveries}/${id}`, who.token).then((r) => r.body.data);
  const endpoint = (who: Actor, id: string) => api.get(`${base}/${id}`, who.token).then((r) => r.body.data);
  const ping = async (who: Actor, endpointId: string): Promise<string> =>
    (await api.post(`${base}/${endpointId}/test`, who.token)).body.data.delivery_id;
  /** Arrivals in the busiest window of `ms`. */
  const busiest = (got: readonly ReceivedDelivery[], ms: number) => {
    const at = got.map((d) => d.at).sort((a, b) => a - b);
    let most = 0;
    for (let i = 0, j = 0; i < at.length; i++) {
      while (at[i]! - at[j]! >= ms) j++;
      most = Math.max(most, i - j + 1);
    }
    return most;
  };

  it('records a healthy endpoint’s success while another endpoint’s POST of the same event still hangs', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const [hanging, healthy] = [name('hang'), name('healthy')];
    const slow = await registerHook(svc, receiver, staff, hanging, ['subscription.approved'], { delayMs: 25_000 });
    const fast = await registerHook(svc, receiver, staff, healthy, ['subscription.approved']);
    const event = anEvent(staff.orgId);
    await publish(svc, [event]);

    await receiver.waitFor(hanging, 1); // the slow endpoint holds its request
    const done = await until(
      'the healthy endpoint’s success, recorded',
      async () => {
        const d = await delivery(staff, deliveryIdFor(event.id, fast.id));
        return d?.status === 'success' ? d : undefined;
      },
      { timeoutMs: 5000 },
    );
    expect(done.attempts).toMatchObject([{ number: 1, response_status: 200 }]);
    // Observed at the same moment: the slow endpoint's attempt is still in flight.
    expect((await delivery(staff, deliveryIdFor(event.id, slow.id))).attempts).toMatchObject([
      { number: 1, duration_ms: null },
    ]);
  });

  it('never delays another organisation behind an endpoint that hangs', async () => {
    const x = await actor(svc, newOrg(), ['staff']);
    const y = await actor(svc, newOrg(), ['staff']);
    const [hanging, healthy] = [name('x-hangs'), name('y-healthy')];
    await registerHook(svc, receiver, x, hanging, ['subscription.approved'], { delayMs: 25_000 });
    await registerHook(svc, receiver, y, healthy, ['subscription.approved']);
    await Promise.all(Array.from({ length: 60 }, () => publish(svc, [anEvent(x.orgId)])));
    await receiver.waitFor(hanging, 32); // its concurrency is full, the rest queued behind it

    const published = Date.now();
    await publish(svc, [anEvent(y.orgId)]);
    const [got] = await receiver.waitFor(healthy, 1, 5000);
    expect(got!.at - published).toBeLessThan(1000);
    // The hanging endpoint never had more than its concurrency limit at once.
    expect(Math.max(...(await receiver.received(hanging)).map((d) => d.concurrent))).toBeLessThanOrEqual(32);
  });

  it('serves another organisation at once while one organisation’s burst is still queued', async () => {
    const x = await actor(svc, newOrg(), ['staff']);
    const y = await actor(svc, newOrg(), ['staff']);
    const [bursty, quiet] = [name('x-burst'), name('y-quiet')];
    const burst = await registerHook(svc, receiver, x, bursty, ['subscription.approved'], { delayMs: 100 });
    await api.patch(`${base}/${burst.id}`, x.token, { maxInFlight: 4 }); // about 40 a second
    await registerHook(svc, receiver, y, quiet, ['subscription.approved']);
    await publish(
      svc,
      Array.from({ length: 400 }, () => anEvent(x.orgId)),
    );
    await receiver.waitFor(bursty, 4);

    const published = Date.now();
    await publish(svc, [anEvent(y.orgId)]);
    const [got] = await receiver.waitFor(quiet, 1, 5000);
    expect(got!.at - published).toBeLessThan(1000);
    expect((await receiver.received(bursty)).length).toBeLessThan(200); // most of the burst still queued
  });

  it('keeps an endpoint to its concurrency limit, as the receiver counts open requests', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const hook = name('concurrency');
    const res = await api.post(base, staff.token, {
      url: receiver.url(hook),
      eventTypes: ['subscription.approved'],
      maxInFlight: 3,
    });
    expect([res.status, res.body.data?.max_in_flight]).toEqual([201, 3]);
    await receiver.plan(hook, { secret: res.body.data.signing_secret, delayMs: 200 });
    await publish(
      svc,
      Array.from({ length: 15 }, () => anEvent(staff.orgId)),
    );
    const got = await receiver.waitFor(hook, 15);
    expect(Math.max(...got.map((d) => d.concurrent))).toBe(3);
  });

  it('keeps an endpoint to its rate limit, as the receiver counts arrivals in any second, and drops none', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const hook = name('rate');
    const res = await api.post(base, staff.token, {
      url: receiver.url(hook),
      eventTypes: ['subscription.approved'],
      rateLimitPerSecond: 5,
    });
    expect([res.status, res.body.data?.rate_limit_per_second]).toEqual([201, 5]);
    await receiver.plan(hook, { secret: res.body.data.signing_secret });
    const events = Array.from({ length: 20 }, () => anEvent(staff.orgId));
    await publish(svc, events);
    const got = await receiver.waitFor(hook, 20, 30_000);
    expect(busiest(got, 1000)).toBeLessThanOrEqual(5);
    expect(got.map((d) => d.headers['x-service-event-id']).sort()).toEqual(events.map((e) => e.id).sort());
    const changed = await api.patch(`${base}/${res.body.data.id}`, staff.token, { rateLimitPerSecond: null });
    expect(changed.body.data.rate_limit_per_second).toBeNull();
  });

  it('opens an endpoint’s circuit after failures in a row, sends nothing while open, and closes it on a probe’s success', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const hook = name('circuit');
    const failing = await registerHook(svc, receiver, staff, hook, ['*'], { defaultStatus: 500 });
    for (let i = 1; i <= 3; i++) {
      await ping(staff, failing.id);
      await receiver.waitFor(hook, i);
    }
    const open = await until("the failing endpoint's circuit open", async () => {
      const e = await endpoint(staff, failing.id);
      return e.circuit.state === 'open' ? e : undefined;
    });
    expect(open.circuit).toMatchObject({ consecutive_failures: 3, opened_at: expect.any(String) });

    // While open: straight onto the retry schedule, recorded, nothing sent.
    const held = await ping(staff, failing.id);
    const heldRow = await until('the held delivery recorded failed', async () => {
      const d = await delivery(staff, held);
      return d?.status === 'failed' ? d : undefined;
    });
    expect(heldRow.attempts).toMatchObject([
      {
        number: 1,
        response_status: null,
        error: 'CIRCUIT_OPEN: not sent, the endpoint failed repeatedly and its circuit is open',
      },
    ]);
    expect(heldRow.next_attempt_at).toEqual(expect.any(String));
    expect(await receiver.received(hook)).toHaveLength(3);

    // Past the cool-down the next delivery is the probe; its success closes the circuit.
    await receiver.plan(hook, { secret: failing.secret, defaultStatus: 200 });
    await until("the circuit's cool-down to pass", async () =>
      Date.parse((await endpoint(staff, failing.id)).circuit.next_probe_at) <= Date.now() ? true : undefined,
    );
    const probe = await ping(staff, failing.id);
    await until('the probe delivered', async () =>
      (await delivery(staff, probe))?.status === 'success' ? true : undefined,
    );
    expect((await endpoint(staff, failing.id)).circuit).toEqual({
      state: 'closed',
      consecutive_failures: 0,
      opened_at: null,
      next_probe_at: null,
    });

    if (svc.config.WEBHOOK_DELIVERY_SHAPE === 'workflow') {
      // Each delivery is its own workflow from attempt 1 (decision 0297): the held one waits on its
      // schedule's durable timer in its own run, and that history replays.
      const handle = svc.temporal.workflow.getHandle(deliveryWorkflowId(held));
      expect((await handle.describe()).status.name).toBe('RUNNING');
      const own = await handle.fetchHistory();
      expect(own.events?.some((e) => e.timerStartedEventAttributes)).toBe(true);
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! }, dataConverter: testDataConverter() },
        own,
      );
      return;
    }
    // The failed first attempts went to a retry scheduler, which started their delivery workflows. The
    // hand-over runs after the results commit, and the starts after it: waited for (on a loaded CI
    // machine none had started yet when the probe was delivered).
    const schedulerHistories = () =>
      Promise.all(
        Array.from({ length: svc.config.WEBHOOK_SCHEDULER_SHARDS }, (_, shard) =>
          svc.temporal.workflow
            .getHandle(retrySchedulerWorkflowId(svc.config.TEMPORAL_TASK_QUEUE, shard))
            .fetchHistory()
            .catch(() => undefined),
        ),
      );
    const childStarts = (hs: Awaited<ReturnType<typeof schedulerHistories>>) =>
      hs.flatMap((h) => h?.events ?? []).filter((e) => e.childWorkflowExecutionStartedEventAttributes).length;
    const histories = await until('four delivery workflows started by the retry schedulers', async () => {
      const hs = await schedulerHistories();
      return childStarts(hs) >= 4 ? hs : undefined;
    });
    expect(childStarts(histories)).toBeGreaterThanOrEqual(4);
    const recorded = histories.find((h) => h?.events?.some((e) => e.childWorkflowExecutionStartedEventAttributes))!;
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! }, dataConverter: testDataConverter() },
      recorded,
    );
    // RECORD_HISTORY_DIR=test/replay/histories records this shape for the replay suite.
    if (process.env.RECORD_HISTORY_DIR)
      writeFileSync(join(process.env.RECORD_HISTORY_DIR, 'webhook-retry-scheduler.json'), historyToJSON(recorded));
  });

  // In `workflow` shape 600 deliveries are 600 workflows, at the server's workflows a second shared
  // with the suite beside this one: 14 s in one run, over 30 s in another beside a busier suite on two
  // cores. What is checked is once each, not how soon.
  const drainMs = () => (svc.config.WEBHOOK_DELIVERY_SHAPE === 'workflow' ? 120_000 : 30_000);

  it('delivers each delivery of a fault-free run to the receiver exactly once', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const hooks = [name('exact-a'), name('exact-b'), name('exact-c')];
    for (const h of hooks) await registerHook(svc, receiver, staff, h, ['subscription.approved']);
    const events = Array.from({ length: 200 }, () => anEvent(staff.orgId));
    await Promise.all(events.map((e) => publish(svc, [e])));
    for (const h of hooks) {
      const got = await receiver.waitFor(h, events.length, drainMs());
      expect(got.map((d) => d.headers['x-service-event-id']).sort()).toEqual(events.map((e) => e.id).sort());
    }
    // Nothing more comes: every delivery is recorded a success, so no attempt follows.
    const knex = svc.orm.em.getConnection().getKnex();
    await until(
      'every delivery recorded a success',
      async () => {
        const [row] = await knex('webhook_deliveries')
          .where({ org_id: staff.orgId, status: 'success', attempt_count: 1 })
          .count<{ n: string }[]>('* as n');
        return Number(row!.n) === events.length * hooks.length ? true : undefined;
      },
      { timeoutMs: drainMs() },
    );
    for (const h of hooks) expect(await receiver.received(h)).toHaveLength(events.length);
  }, 300_000);

  it('sweeps without ever signalling the deliveries an ordered workflow holds back', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const hook = name('ordered');
    const res = await api.post(base, staff.token, {
      url: receiver.url(hook),
      eventTypes: ['*'],
      ordering: 'per_subscription',
    });
    await receiver.plan(hook, { secret: res.body.data.signing_secret, defaultStatus: 500 });
    const subscriptionId = crypto.randomUUID();
    const events = [1, 2, 3].map(() => ({ ...anEvent(staff.orgId), data: { id: subscriptionId } }));
    await publish(svc, events); // one hand-over: the first fails and holds back the other two
    await receiver.waitFor(hook, 1);
    const sweeps = () =>
      registry
        .getSingleMetric('tranche_webhook_sweeps_total')!
        .get()
        .then((m) => m.values[0]!.value);
    const before = await sweeps();
    await until('five sweeps', async () => ((await sweeps()) >= before + 5 ? true : undefined));
    const history = await svc.temporal.workflow
      .getHandle(orderedWorkflowId(res.body.data.id, subscriptionId))
      .fetchHistory();
    const signals = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes);
    expect(signals).toHaveLength(1);
  });
});
