import { orgShareOf } from '../../domain/attempt-slots';
import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { PATHS, registerHook } from './support/hooks';
import { anEvent, publish } from './support/publish';
import type { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';

/**
 * `workflow` shape (docs/decisions/0334-workflow-shape-attempts-local.md): an attempt is a local
 * activity that holds one of the worker's workflow task slots while its POST runs, so one
 * organisation's slow POSTs could hold every slot and leave another's delivery unpolled. Half the
 * slots may wait on a POST, and the gate keeps an organisation to those less the reserve.
 */
const SLOTS = 40;
const SHARE = orgShareOf(SLOTS);
const SLOW_POST_MS = 10_000;

describe("workflow shape: an organisation's slow POSTs leave the worker's last slots to the others", () => {
  let svc: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    ({ svc, receiver } = await startWebhookStack('A', {
      WEBHOOK_DELIVERY_SHAPE: 'workflow',
      WORKER_MAX_CACHED_WORKFLOWS: String(SLOTS),
      WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: String(SLOTS),
    }));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  it("delivers another organisation's event at once while one holds its whole share in slow POSTs", async () => {
    const x = await actor(svc, newOrg(), ['staff']);
    const y = await actor(svc, newOrg(), ['staff']);
    const [slow, healthy] = ['share-x-slow', 'share-y-healthy'];
    const endpoint = await registerHook(svc, receiver, x, slow, ['subscription.approved'], { delayMs: SLOW_POST_MS });
    // The endpoint's own limit is above the organisation's share, so only the share holds X back.
    const patched = await http(svc.baseUrl).patch(`${PATHS.A.endpoints}/${endpoint.id}`, x.token, { maxInFlight: 64 });
    expect(patched.status).toBe(200);
    await registerHook(svc, receiver, y, healthy, ['subscription.approved']);
    await Promise.all(Array.from({ length: 40 }, () => publish(svc, [anEvent(x.orgId)])));
    const held = await receiver.waitFor(slow, SHARE, 20_000); // X's share is in flight, the rest wait their turn

    await publish(svc, [anEvent(y.orgId)]);
    const [got] = await receiver.waitFor(healthy, 1, 8000);
    // Y's delivery took a slot X could not hold: it came before the first of X's POSTs freed one.
    // (The bound is that, not a latency: a machine loaded by the CI's other suites once took 1.1 s.)
    expect(got!.at).toBeLessThan(Math.min(...held.map((d) => d.at)) + SLOW_POST_MS);
    // X never held more than its share at once, as the receiver counts open requests.
    expect(Math.max(...(await receiver.received(slow)).map((d) => d.concurrent))).toBeLessThanOrEqual(SHARE);
  });
});
