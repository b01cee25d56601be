import { eventually, verdict, WIRE_FLOW_EVENTS, type wireFlowWorld } from './subscription-flow';
import { settledDeliveries, type startReceiver } from './webhook-receiver';

type World = Awaited<ReturnType<typeof wireFlowWorld>>;
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * After a fault: drives each wire subscription on to completion (a command that was lost is sent
 * again; one that landed is not repeated), then checks what every fault test expects: each is
 * completed, its projection equals the workflow's state, each event is in the outbox exactly once,
 * and each reached the endpoint with its delivery attempts numbered 1..n. Closes the receiver.
 */
export async function finishAndExpectRecovered(
  world: World,
  subs: { id: string; reference_code: string }[],
  stack: { databaseUrl: string; temporalAddress: string },
  receiver: Receiver,
): Promise<void> {
  for (const s of subs) {
    await eventually('approve', async () => ((await world.get(s.id)).status === 'pending_review' ? world.approve(s.id) : undefined));
    await eventually('reconcile', async () => ((await world.get(s.id)).status === 'approved' ? world.reconcile(s.reference_code) : undefined));
  }
  const verdicts = await Promise.all(subs.map((s) => verdict(stack, s.id)));
  for (const v of verdicts) {
    expect(v).toEqual({ status: 'completed', projectionEqualsWorkflow: true, eventCounts: Object.fromEntries(WIRE_FLOW_EVENTS.map((t) => [t, 1])) });
  }
  const deliveries = await settledDeliveries(stack.databaseUrl, receiver.received, subs.map((s) => s.id));
  await receiver.close();
  expect(deliveries).toEqual(subs.map(() => ({ undelivered: [], attemptGaps: [] })));
}
