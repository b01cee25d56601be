import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { createAttemptActivities } from '../../activities/webhook-attempt';
import { createDeliveryEngine } from '../../webhooks';
import { deliveryIdFor } from './support/delivery-id';
import { ENDPOINT_DISABLED } from '../../domain/events';
import { deliveryWorkflowId } from '../../domain/webhook-messages';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { PATHS, registerHook } from './support/hooks';
import type { Receiver, HookPlan } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';
import { until } from '../support/wait';
import { timerPending } from './support/webhook-harness';
import { publish as publishTo, publishUnqueued } from './support/publish';

/**
 * Endpoint health on the real delivery engine (dispatcher, delivery workflows, HTTP): a 410 disables the
 * endpoint and ends the delivery, whether it answers attempt 1 (the dispatcher) or a later one; a
 * first attempt's Retry-After reaches the delivery workflow its hand-over starts. The engine is the
 * same for both behaviour sets, so one set is enough.
 */
describe('endpoint health on the delivery engine', () => {
  const set = 'A';
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;
  let api: ReturnType<typeof http>;
  const base = PATHS[set].endpoints;
  const deliveries = PATHS[set].deliveries;

  beforeAll(async () => {
    ({ svc, receiver, api } = await startWebhookStack(set));
  });
  // Each test its own organisation: webhook.endpoint.disabled goes to every other endpoint of it.
  beforeEach(async () => (staff = await actor(svc, newOrg(), ['staff'])));
  afterAll(() => stopWebhookStack({ svc, receiver }));

  const hook = (name: string, plan: Omit<HookPlan, 'secret'> = {}, types = ['subscription.approved']) =>
    registerHook(svc, receiver, staff, `eh-${name}-${staff.orgId.slice(0, 8)}`, types, plan);
  const hookName = (name: string) => `eh-${name}-${staff.orgId.slice(0, 8)}`;
  /** One subscription.approved event through the engine (queue → dispatcher). */
  const publish = async () => {
    const event = {
      id: randomUUID(),
      type: 'subscription.approved',
      source: 'service.issuance',
      orgId: staff.orgId,
      occurredAt: new Date().toISOString(),
      data: { id: randomUUID() },
    };
    await publishTo(svc, [event]);
    return event.id;
  };
  const delivery = (id: string) => api.get(`${deliveries}/${id}`, staff.token).then((r) => r.body.data);
  const endpoint = (id: string) => api.get(`${base}/${id}`, staff.token).then((r) => r.body.data);

  it('disables the endpoint on a 410 to the dispatcher’s first attempt: no delivery workflow, no further attempt, the others told', async () => {
    const gone = await hook('gone-first', { responses: [410] });
    await hook('watcher-first', {}, [ENDPOINT_DISABLED]);
    const eventId = await publish();
    const deliveryId = deliveryIdFor(eventId, gone.id);

    const [notice] = await receiver.waitFor(hookName('watcher-first'), 1);
    const body = JSON.parse(notice!.body);
    expect(body).toMatchObject({ event_type: ENDPOINT_DISABLED, data: { endpoint_id: gone.id, reason: 'gone' } });
    expect(await endpoint(gone.id)).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
    expect(await delivery(deliveryId)).toMatchObject({ status: 'failed', attempt_count: 1, next_attempt_at: null });
    const handle = svc.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId));
    if (svc.config.WEBHOOK_DELIVERY_SHAPE === 'workflow') {
      // Its own workflow made attempt 1 (docs/decisions/0297-webhook-delivery-shape-as-a-setting.md) and ended there.
      expect(await handle.result()).toBe('endpoint_disabled');
    } else {
      // The answer disabled the endpoint, so no schedule was handed over for it.
      await expect(handle.describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    }
    expect(await receiver.received(hookName('gone-first'))).toHaveLength(1);
  });

  it('disables the endpoint on a 410 to a later attempt and ends that delivery workflow', async () => {
    const gone = await hook('gone-later', { responses: [500, 410] });
    const eventId = await publish();
    const deliveryId = deliveryIdFor(eventId, gone.id);
    const handle = svc.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId));
    await until('delivery workflow started', () =>
      handle.describe().then(
        () => true,
        () => undefined,
      ),
    );

    // Attempt 2 now, instead of after the 30 s of the schedule.
    expect((await api.post(`${deliveries}/${deliveryId}/retry`, staff.token)).status).toBe(202);
    expect(await handle.result()).toBe('endpoint_disabled');
    expect(await endpoint(gone.id)).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
    expect(await delivery(deliveryId)).toMatchObject({ status: 'failed', attempt_count: 2, next_attempt_at: null });
    expect((await receiver.received(hookName('gone-later'))).map((d) => d.status)).toEqual([500, 410]);
  });

  it('hands a first attempt’s Retry-After to the delivery workflow its hand-over starts', async () => {
    const busy = await hook('busy-first', { responses: [{ status: 503, headers: { 'retry-after': '7200' } }] });
    const eventId = await publish();
    const deliveryId = deliveryIdFor(eventId, busy.id);
    const handle = svc.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId));
    await until('delivery workflow waiting', () =>
      handle.describe().then(
        () => timerPending(handle).then((p) => p || undefined),
        () => undefined,
      ),
    );

    const events = (await handle.fetchHistory()).events ?? [];
    const timer = events.find((e) => e.timerStartedEventAttributes)!.timerStartedEventAttributes!;
    expect(Number(timer.startToFireTimeout!.seconds)).toBe(7200); // not the schedule's 30 s
    const row = await delivery(deliveryId);
    const shown = new Date(row.next_attempt_at).getTime() - new Date(row.last_attempt_at).getTime();
    expect(shown).toBeGreaterThanOrEqual(7_200_000);
    expect(shown).toBeLessThan(7_200_000 + 30_000);
    await handle.terminate('test over');
  });

  it('keeps an attempt’s Retry-After when the attempt runs again after its worker died', async () => {
    const busy = await hook('busy-replay', { responses: [{ status: 503, headers: { 'retry-after': '7200' } }] });
    const event = {
      id: randomUUID(),
      type: 'subscription.approved',
      source: 'service.issuance',
      orgId: staff.orgId,
      occurredAt: new Date().toISOString(),
      data: { id: randomUUID() },
    };
    await publishUnqueued(svc, [event], [{ eventId: event.id, endpointId: busy.id }]);
    const deliveryId = deliveryIdFor(event.id, busy.id);
    // Each call a fresh process's engine: nothing of the first is in the second's memory.
    const worker = () => createAttemptActivities(createDeliveryEngine({ orm: svc.orm, config: svc.config }));
    const input = {
      deliveryId,
      number: 2,
      attemptedAt: new Date().toISOString(),
      nextDelayMs: 120_000,
      owner: `run-${randomUUID()}`,
    };
    const expected = { outcome: 'failed', responseStatus: 503, retryAfterMs: 7_200_000 };
    expect(await worker().attemptDelivery(input)).toMatchObject(expected);
    // The result is recorded, but its worker died before the workflow saw it: a new worker runs
    // the same attempt again, finds it recorded, sends nothing, and must answer the same wait.
    expect(await worker().attemptDelivery(input)).toMatchObject(expected);
    expect(await receiver.received(hookName('busy-replay'))).toHaveLength(1);
  });
});
