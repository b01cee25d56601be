import { freshDatabase } from '../support/service';
import { startServicePair, type ServicePair } from './support/service-pair';
import { commandsSent } from './support/processes';
import { wireFlowWorld } from './support/subscription-flow';
import { startReceiver } from './support/webhook-receiver';
import { commandsHeld, finishAndExpectRecovered } from './support/recovery';

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
    const since = pair.api.logs().length;
    const approvals = subs.map((s) => world.approve(s.id).catch((err: Error) => err));
    await commandsSent(pair.api, since, subs.length);
    await pair.workers[0]!.kill9();
    // Observed, not slept on: each approval landed before the kill or waits for a worker.
    await commandsHeld(
      { databaseUrl, temporalAddress },
      subs.map((s) => s.id),
      'approved',
    );
    await pair.addWorker();
    await Promise.all(approvals);

    // An approval that timed out while no worker ran is retried; one that landed is not repeated.
    await finishAndExpectRecovered(world, subs, { databaseUrl, temporalAddress }, receiver);
  }, 300_000);
});
