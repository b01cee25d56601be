import { randomUUID } from 'node:crypto';
import type { Config } from '../../lib/runtime/config';
import type { Orm } from '../../db/orm';
import { createDeliveryEngine, deliveryReads, endpointStore, secretBoxFrom } from '../../webhooks';
import { deliveryWorkflowId, runOwner } from '../../domain/webhook-messages';
import { registry } from '../../lib/runtime/metrics';
import type { TestService } from '../support/service';
import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';
import { PATHS, registerHook } from './support/hooks';
import { anEvent, publishUnqueued } from './support/publish';
import { webhookHarness } from './support/webhook-harness';

/**
 * `workflow` shape: the start path begins attempt 1 of a delivery workflow whose first task came back
 * to its own process, and the run's local activity joins that call
 * (docs/decisions/0358-first-attempt-begun-at-the-start.md).
 */
const WORKFLOW_SHAPE = { WEBHOOK_DELIVERY_SHAPE: 'workflow', WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' };

describe('one call per attempt in a process', () => {
  let config: Config;
  let orm: Orm;
  let receiver: Receiver;

  beforeAll(async () => {
    [{ config, orm }, receiver] = await Promise.all([webhookHarness(WORKFLOW_SHAPE), Receiver.start()]);
  });
  afterAll(async () => {
    await orm?.close(true);
    await receiver?.stop();
  });

  it('sends one POST and answers one result when the same owner asks for the same attempt twice at once', async () => {
    const orgId = randomUUID();
    const hook = `join-${randomUUID().slice(0, 8)}`;
    const { row, secret } = await endpointStore(orm, secretBoxFrom(config)).create(orgId, {
      url: receiver.url(hook),
      description: hook,
      eventTypes: ['*'],
    });
    // Slow enough that the second ask comes while the first POST is open.
    await receiver.plan(hook, { secret, delayMs: 1500 });
    const event = anEvent(orgId);
    const { deliveries } = await publishUnqueued({ orm, config }, [event], [{ eventId: event.id, endpointId: row.id }]);
    const deliveryId = deliveries[0]!.deliveryId;

    const engine = createDeliveryEngine({ orm, config });
    const input = {
      deliveryId,
      number: 1,
      attemptedAt: new Date().toISOString(),
      nextDelayMs: 30_000,
      owner: runOwner(randomUUID()),
    };
    const first = engine.attempt(input);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = engine.attempt(input);
    // Without one call per attempt the second found the first's row without a result and answered
    // it in doubt: a failure recorded over a POST still open (seen failing).
    expect((await second).outcome).toBe('success');
    expect((await first).outcome).toBe('success');
    expect(await receiver.received(hook)).toHaveLength(1);
    const attempts = await deliveryReads(orm).attempts(deliveryId);
    expect(attempts.map((a) => ({ number: a.number, status: a.response_status }))).toEqual([
      { number: 1, status: 200 },
    ]);

    // Asked again once it has ended, the attempt is found recorded: nothing is sent again.
    expect((await engine.attempt(input)).outcome).toBe('success');
    expect(await receiver.received(hook)).toHaveLength(1);
  });
});

describe('workflow shape: attempt 1 begun by the start path', () => {
  let svc: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    ({ svc, receiver } = await startWebhookStack('A', WORKFLOW_SHAPE));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  const begun = async () =>
    ((await registry.getSingleMetric('tranche_webhook_first_attempts_begun_total')!.get()).values[0]?.value ??
      0) as number;

  it("begins a test ping's attempt as its run, and the run's local activity records that one attempt", async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const hook = `begun-${randomUUID().slice(0, 8)}`;
    const endpoint = await registerHook(svc, receiver, staff, hook, ['*']);
    const before = await begun();
    const res = await http(svc.baseUrl).post(`${PATHS.A.endpoints}/${endpoint.id}/test`, staff.token);
    expect(res.status).toBe(202);
    const { delivery_id } = res.body.data;
    await receiver.waitFor(hook, 1);

    const handle = svc.temporal.workflow.getHandle(deliveryWorkflowId(delivery_id));
    expect(await handle.result()).toBe('success');
    expect(await begun()).toBe(before + 1);
    // Begun under the run that was started, so the run's own activity found it its own.
    const { runId } = await handle.describe();
    const attempts = await svc.orm.em
      .getConnection()
      .execute(`select number, owner, response_status from webhook_attempts where delivery_id = ?`, [delivery_id]);
    expect(attempts).toEqual([{ number: 1, owner: runOwner(runId), response_status: 200 }]);
    expect(await receiver.received(hook)).toHaveLength(1);
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.flatMap((e) => e.markerRecordedEventAttributes?.markerName ?? [])).toEqual(['core_local_activity']);
  });
});
