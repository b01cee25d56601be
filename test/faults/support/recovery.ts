import { testDataConverter } from '../../support/data-converter';
import { eventually, until } from '../../support/wait';
import { sql, THROUGH_A_RESTART, verdict, WIRE_FLOW_EVENTS, wireFlowWorld } from './subscription-flow';
import { settledDeliveries, startReceiver } from './webhook-receiver';
import { Client, Connection } from '@temporalio/client';
import { deliveryWorkflowId } from '../../../domain/webhook-messages';
import { subscriptionWorkflowId } from '../../../domain/subscription';
import { timerPending } from '../../webhooks/support/webhook-harness';

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
    await eventually(
      'approve',
      async () => ((await world.get(s.id)).status === 'pending_review' ? world.approve(s.id) : undefined),
      THROUGH_A_RESTART,
    );
    await eventually(
      'reconcile',
      async () => ((await world.get(s.id)).status === 'approved' ? world.reconcile(s.reference_code) : undefined),
      THROUGH_A_RESTART,
    );
  }
  const verdicts = await Promise.all(subs.map((s) => verdict(stack, s.id)));
  for (const v of verdicts) {
    expect(v).toEqual({
      status: 'completed',
      projectionEqualsWorkflow: true,
      eventCounts: Object.fromEntries(WIRE_FLOW_EVENTS.map((t) => [t, 1])),
    });
  }
  const deliveries = await settledDeliveries(
    stack.databaseUrl,
    receiver.received,
    subs.map((s) => s.id),
  );
  await receiver.close();
  expect(deliveries).toEqual(subs.map(() => ({ undelivered: [], attemptGaps: [] })));
}

/**
 * A receiver refuses each event's first attempt, so both of a fresh subscription's deliveries
 * wait on their 30 s timer; `fault` strikes during that wait. Expected after recovery: every
 * event delivered, and each delivery a success on attempt 2 with attempts 1 and 2 recorded.
 */
export async function expectDeliveriesSurviveBackoffFault(
  pair: { baseUrl: string; pem: string },
  stack: { databaseUrl: string; temporalAddress: string },
  fault: () => Promise<void>,
): Promise<void> {
  const { databaseUrl } = stack;
  const world = await wireFlowWorld({ baseUrl: pair.baseUrl, pem: pair.pem, databaseUrl });
  const receiver = await startReceiver(pair.baseUrl, world.tokens.staff, { failFirst: true });
  const sub = await world.toReview(); // subscription.created and subscription.signed
  await until('first attempts refused', () => receiver.refused.size >= 2, THROUGH_A_RESTART);
  // Observed, not slept on: both deliveries recorded as failed and their workflows holding the 30 s timer.
  const connection = await Connection.connect({ address: stack.temporalAddress, connectTimeout: '10s' });
  try {
    const client = new Client({ connection, dataConverter: testDataConverter() });
    await eventually(
      'both deliveries waiting on their timer',
      async () => {
        const failed = await sql(
          databaseUrl,
          `select d.id from webhook_deliveries d join events e on e.id = d.event_id where e.data->>'id' = $1 and d.status = 'failed'`,
          [sub.id],
        );
        const waiting = await Promise.all(
          failed.map((d) => timerPending(client.workflow.getHandle(deliveryWorkflowId(String(d.id))))),
        );
        if (waiting.length < 2 || !waiting.every(Boolean))
          throw new Error(`${waiting.filter(Boolean).length} of 2 waiting`);
      },
      THROUGH_A_RESTART,
    );
  } finally {
    await connection.close();
  }
  await fault();

  const [delivered] = await settledDeliveries(databaseUrl, receiver.received, [sub.id], 150_000);
  await receiver.close();
  expect(delivered).toEqual({ undelivered: [], attemptGaps: [] });
  // The receiver has attempt 2; its result is written just after the POST returns.
  const attempts = await eventually(
    'attempt 2 results recorded',
    async () => {
      const rows = await sql(
        databaseUrl,
        `select d.attempt_count, d.status from webhook_deliveries d join events e on e.id = d.event_id where e.data->>'id' = $1`,
        [sub.id],
      );
      if (rows.some((r) => r.status !== 'success')) throw new Error(`not yet: ${JSON.stringify(rows)}`);
      return rows;
    },
    THROUGH_A_RESTART,
  );
  expect(attempts).toEqual([
    { attempt_count: 2, status: 'success' },
    { attempt_count: 2, status: 'success' },
  ]);
}

/**
 * Each subscription's command either landed (its projection says `status`) or waits in a workflow
 * task no worker has finished: the in-flight state a worker crash is meant to meet, observed.
 */
export async function commandsHeld(
  stack: { databaseUrl: string; temporalAddress: string },
  ids: string[],
  status: string,
): Promise<void> {
  const connection = await Connection.connect({ address: stack.temporalAddress, connectTimeout: '10s' });
  try {
    const client = new Client({ connection, dataConverter: testDataConverter() });
    const held = async (id: string) => {
      const { raw } = await client.workflow.getHandle(subscriptionWorkflowId(id)).describe();
      if (raw.pendingWorkflowTask) return true;
      const [row] = await sql(stack.databaseUrl, 'select status from subscriptions where id = $1', [id]);
      return row?.status === status;
    };
    await until(`each command landed (${status}) or waiting for a worker`, async () =>
      (await Promise.all(ids.map(held))).every(Boolean),
    );
  } finally {
    await connection.close();
  }
}
