import { testDataConverter } from '../support/data-converter';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { publish as publishTo } from './support/publish';
import { orderedWorkflowId } from '../../domain/webhook-messages';
import { deliveryIdFor } from './support/delivery-id';
import type { Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { PATHS } from './support/hooks';
import type { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';
import { until } from '../support/wait';

/**
 * Ordered delivery per subscription on the real stack: one subscription's failing event
 * holds back that subscription's later events only; they arrive in order once it succeeds. The
 * engine is the same for both behaviour sets, so one set is enough.
 */
describe('ordered delivery per subscription', () => {
  const set = 'A';
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;
  let api: ReturnType<typeof http>;
  const base = PATHS[set].endpoints;

  beforeAll(async () => {
    ({ svc, receiver, api, staff } = await startWebhookStack(set));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  /** One subscription event through the engine's fast path; `mark` lets the receiver tell it apart. */
  const publish = async (subscriptionId: string, mark: string) => {
    const event = {
      id: randomUUID(),
      type: 'subscription.approved',
      source: 'service.issuance',
      orgId: staff.orgId,
      occurredAt: new Date().toISOString(),
      data: { id: subscriptionId, mark },
    };
    await publishTo(svc, [event]);
    return event.id;
  };
  const marks = async (hook: string) =>
    (await receiver.received(hook)).filter((d) => d.status === 200).map((d) => JSON.parse(d.body).data.mark as string);

  it('stores the ordering asked for, and refuses one it does not know', async () => {
    const created = await api.post(base, staff.token, {
      url: receiver.url('ord-shape'),
      eventTypes: ['*'],
      ordering: 'per_subscription',
    });
    expect(created.status).toBe(201);
    expect(created.body.data.ordering).toBe('per_subscription');
    const patched = await api.patch(`${base}/${created.body.data.id}`, staff.token, { ordering: 'none' });
    expect(patched.body.data.ordering).toBe('none');
    const bad = await api.patch(`${base}/${created.body.data.id}`, staff.token, { ordering: 'global' });
    expect(bad.status).toBe(422);
  });

  it('holds back only the failing subscription’s later events, then delivers them in order', async () => {
    const hook = `ord-${randomUUID().slice(0, 8)}`;
    const res = await api.post(base, staff.token, {
      url: receiver.url(hook),
      eventTypes: ['subscription.approved'],
      ordering: 'per_subscription',
    });
    expect(res.status).toBe(201);
    const endpointId: string = res.body.data.id;
    const secret: string = res.body.data.signing_secret;
    const [stuck, healthy] = [randomUUID(), randomUUID()];
    // The stuck subscription's first event is refused until the test says otherwise.
    await receiver.plan(hook, { secret, refuse: ['"stuck-1"'] });

    const first = await publish(stuck, 'stuck-1');
    await receiver.waitFor(hook, 1); // its attempt 1 failed; the schedule waits 30 s
    const later: string[] = [];
    for (const mark of ['stuck-2', 'stuck-3']) later.push(deliveryIdFor(await publish(stuck, mark), endpointId));
    for (const mark of ['healthy-1', 'healthy-2', 'healthy-3']) await publish(healthy, mark);

    // The healthy subscription flows, in order, while the stuck one's first event is still failed.
    const flowing = await until('the three healthy events delivered', async () => {
      const got = await marks(hook);
      return got.filter((m) => m.startsWith('healthy')).length === 3 ? got : undefined;
    });
    expect(flowing.filter((m) => m.startsWith('healthy'))).toEqual(['healthy-1', 'healthy-2', 'healthy-3']);
    const firstDelivery = deliveryIdFor(first, endpointId);
    const rows = () =>
      svc.orm.em
        .getConnection()
        .getKnex()('webhook_deliveries')
        .whereIn('id', [firstDelivery, ...later])
        .select('id', 'status', 'attempt_count');
    const held = await rows();
    // Its later events were not attempted: only the first has an attempt, and it has not succeeded.
    expect(held.find((d) => d.id === firstDelivery)).toMatchObject({ status: 'failed' });
    expect(held.filter((d) => d.id !== firstDelivery).map((d) => [d.status, d.attempt_count])).toEqual([
      ['pending', 0],
      ['pending', 0],
    ]);
    expect(flowing.filter((m) => m.startsWith('stuck'))).toEqual([]);

    // The endpoint recovers; a manual retry makes the held event's next attempt now.
    await receiver.plan(hook, { secret });
    expect((await api.post(`${PATHS[set].deliveries}/${firstDelivery}/retry`, staff.token)).status).toBe(202);
    const all = await until('the three stuck events delivered', async () => {
      const got = await marks(hook);
      return got.filter((m) => m.startsWith('stuck')).length === 3 ? got : undefined;
    });
    expect(all.filter((m) => m.startsWith('stuck'))).toEqual(['stuck-1', 'stuck-2', 'stuck-3']);
    // One ordered workflow per (endpoint, subscription); its history replays on today's code.
    const handle = svc.temporal.workflow.getHandle(orderedWorkflowId(endpointId, stuck));
    await expect(
      svc.temporal.workflow.getHandle(orderedWorkflowId(endpointId, healthy)).describe(),
    ).resolves.toBeDefined();
    const history = await handle.fetchHistory();
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! }, dataConverter: testDataConverter() },
      history,
      handle.workflowId,
    );
    // RECORD_HISTORY_DIR=test/replay/histories records this shape for the replay suite.
    if (process.env.RECORD_HISTORY_DIR)
      writeFileSync(join(process.env.RECORD_HISTORY_DIR, 'webhook-ordered.json'), historyToJSON(history));
  });
});
