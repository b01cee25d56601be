import { testDataConverter } from '../support/data-converter';
import { Client, Connection } from '@temporalio/client';
import { subscriptionWorkflowId } from '../../domain/subscription';
import { freshDatabase } from '../support/service';
import { startServicePair, type ServicePair } from './support/service-pair';
import { wireFlowWorld } from './support/subscription-flow';
import { startReceiver } from './support/webhook-receiver';
import { finishAndExpectRecovered } from './support/recovery';

/** Which worker identities (pid@host) ran the workflow tasks of a subscription's history. */
async function workerIdentities(client: Client, subscriptionId: string): Promise<Set<string>> {
  const history = await client.workflow.getHandle(subscriptionWorkflowId(subscriptionId)).fetchHistory();
  const ids = (history.events ?? [])
    .map((e) => e.workflowTaskStartedEventAttributes?.identity)
    .filter((i): i is string => Boolean(i));
  return new Set(ids);
}

/**
 * Two workers on one task queue. Expected: both take work; after one is killed with SIGKILL, the
 * other finishes every subscription, with projections equal to workflow state and each event
 * in the outbox exactly once and delivered to the webhook endpoint, with no attempt missing.
 */
describe('two workers on one task queue', () => {
  let pair: ServicePair;
  let databaseUrl: string;
  const temporalAddress = process.env.TEMPORAL_ADDRESS!;

  beforeAll(async () => {
    databaseUrl = await freshDatabase();
    pair = await startServicePair({ databaseUrl, temporalAddress, workers: 2 });
  }, 300_000);
  afterAll(() => pair?.stop());

  it('share the work, and the survivor finishes what the dead one held', async () => {
    const connection = await Connection.connect({ address: temporalAddress });
    const client = new Client({ connection, dataConverter: testDataConverter() });
    try {
      const world = await wireFlowWorld({ baseUrl: pair.baseUrl, pem: pair.pem, databaseUrl });
      const receiver = await startReceiver(pair.baseUrl, world.tokens.staff);
      const subs = await Promise.all(Array.from({ length: 8 }, () => world.toReview()));
      const before = new Set<string>();
      for (const s of subs) for (const id of await workerIdentities(client, s.id)) before.add(id);
      const pids = pair.workers.map((w) => String(w.child.pid));
      expect(pids.filter((pid) => [...before].some((id) => id.startsWith(`${pid}@`))).sort()).toEqual([...pids].sort());

      // Kill the first worker; everything it had cached is now the other's to replay and finish.
      await pair.workers[0]!.kill9();
      await finishAndExpectRecovered(world, subs, { databaseUrl, temporalAddress }, receiver);
      const survivor = pids[1]!;
      const after = await Promise.all(subs.map((s) => workerIdentities(client, s.id)));
      expect(after.every((ids) => [...ids].some((id) => id.startsWith(`${survivor}@`)))).toBe(true);
    } finally {
      await connection.close();
    }
  }, 300_000);
});
