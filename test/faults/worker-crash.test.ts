import { freshDatabase } from '../support/service';
import { startServicePair, type ServicePair } from './support/service-pair';
import { eventually, verdict, WIRE_FLOW_EVENTS, wireFlowWorld } from './support/subscription-flow';
import { settledDeliveries, startReceiver } from './support/webhook-receiver';

/**
 * kill -9 of the only worker while a command is in flight. Expected after a new worker starts:
 * the command completes (the API was waiting on the update), the subscription finishes, its
 * projection equals the workflow's state, each event is in the outbox exactly once, and each
 * reaches the webhook endpoint with no attempt missing from its delivery record.
 */
describe('a worker killed with SIGKILL mid-flow', () => {
  let pair: ServicePair;
  let databaseUrl: string;
  const temporalAddress = process.env.TEMPORAL_ADDRESS!;

  beforeAll(async () => {
    databaseUrl = await freshDatabase();
    pair = await startServicePair({ databaseUrl, temporalAddress });
  }, 300_000);
  afterAll(() => pair?.stop());

  it('finishes every subscription on a new worker, with no event lost or doubled', async () => {
    const world = await wireFlowWorld({ baseUrl: pair.baseUrl, pem: pair.pem, databaseUrl });
    const receiver = await startReceiver(pair.baseUrl, world.tokens.staff);
    const subs = [await world.toReview(), await world.toReview(), await world.toReview()];

    // Approvals in flight when the worker dies: the updates wait for a worker to take them.
    const approvals = subs.map((s) => world.approve(s.id).catch((err: Error) => err));
    await new Promise((r) => setTimeout(r, 150));
    await pair.workers[0]!.kill9();
    await new Promise((r) => setTimeout(r, 3000));
    await pair.addWorker();
    await Promise.all(approvals);

    for (const s of subs) {
      // An approval that timed out while no worker ran is retried; one that landed is not repeated.
      await eventually('approve', async () => ((await world.get(s.id)).status === 'pending_review' ? world.approve(s.id) : undefined));
      await eventually('reconcile', async () => ((await world.get(s.id)).status === 'approved' ? world.reconcile(s.reference_code) : undefined));
    }
    const verdicts = await Promise.all(subs.map((s) => verdict({ databaseUrl, temporalAddress }, s.id)));
    for (const v of verdicts) {
      expect(v).toEqual({ status: 'completed', projectionEqualsWorkflow: true, eventCounts: Object.fromEntries(WIRE_FLOW_EVENTS.map((t) => [t, 1])) });
    }
    // Every event reached the endpoint at least once, and every delivery's attempts are numbered 1..n.
    const deliveries = await settledDeliveries(databaseUrl, receiver.received, subs.map((s) => s.id));
    await receiver.close();
    expect(deliveries).toEqual(subs.map(() => ({ undelivered: [], attemptGaps: [] })));
  }, 300_000);
});
