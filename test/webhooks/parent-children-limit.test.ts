import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from '@temporalio/worker';
import { subscriptionWorkflowId } from '../../domain/subscription';
import { deliveryWorkflowId } from '../../domain/webhook-messages';
import { endpointStore, secretBoxFrom } from '../../webhooks';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';
import { testDataConverter } from '../support/data-converter';
import { subscriptionBody } from '../support/fixtures';
import { until } from '../support/wait';

/** Endpoints that want the subscription's created, signed and info_requested events. */
const ENDPOINTS = 680;
/** Three events to each: 2,040 deliveries, past the 2,000 pending children Temporal allows a run. */
const DELIVERIES = ENDPOINTS * 3;
const COMMAND_TIMEOUT_MS = 60_000;

/**
 * `WEBHOOK_DELIVERY_SHAPE=workflow`: a subscription's workflow parents its events' deliveries
 * (docs/decisions/0298-workflow-shape-parents.md), and Temporal fails every workflow task of a run
 * that would hold more than 2,000 pending children. A run holds at most 1,000; the rest become
 * workflows of their own, started by the engine (docs/decisions/0367-temporal-limits-kept.md).
 * Kept cheap: every endpoint answers 503 with a Retry-After of an hour, so each delivery makes its
 * first attempt and then waits, pending, on a durable timer; each command waits for the deliveries
 * of the one before to make theirs, so it measures the subscription, not the worker's backlog.
 */
describe('a subscription with more pending deliveries than a workflow may hold children', () => {
  let svc: TestService;
  let w: LifecycleWorld;
  let receiver: Server;
  let answered = 0;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        answered++;
        res.writeHead(503, { 'retry-after': '3600' }).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const port = (receiver.address() as AddressInfo).port;
    svc = await startService({
      set: 'A',
      env: {
        WEBHOOK_DELIVERY_SHAPE: 'workflow',
        WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
        COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
      },
    });
    w = await lifecycleWorld(svc);
    // Straight into the endpoints' store, as the API's registration writes them: cheap, and the
    // API's own checks are not what this file tests.
    const store = endpointStore(svc.orm, secretBoxFrom(svc.config));
    const started = Date.now();
    for (let i = 0; i < ENDPOINTS; i += 20) {
      await Promise.all(
        Array.from({ length: Math.min(20, ENDPOINTS - i) }, (_, k) =>
          store.create(w.org, {
            url: `http://127.0.0.1:${port}/later-${i + k}`,
            description: `answers later ${i + k}`,
            eventTypes: ['subscription.created', 'subscription.signed', 'subscription.info_requested'],
          }),
        ),
      );
    }
    console.info(`${ENDPOINTS} endpoints in ${Date.now() - started} ms`);
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  const count = async (sql: string) => {
    const [row] = await svc.orm.em.getConnection().execute<{ n: string }[]>(sql, [w.org]);
    return Number(row!.n);
  };

  /** A command, timed, waiting as long as its deadline (the http helper gives up after 30 s). */
  const command = async (what: string, path: string, token: string, body: unknown = {}) => {
    const started = Date.now();
    const res = await fetch(`${svc.baseUrl}/issuance/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(COMMAND_TIMEOUT_MS + 10_000),
    });
    const answer = { status: res.status, body: (await res.json()) as any };
    console.info(`${what}: ${res.status} in ${Date.now() - started} ms`);
    return answer;
  };

  /** Until every delivery made so far has made its first attempt (and waits an hour for its second). */
  const attempted = async (deliveries: number) => {
    const started = Date.now();
    await until(
      `${deliveries} deliveries attempted once`,
      () => count('select count(*) as n from webhook_deliveries where org_id = ? and attempt_count >= 1'),
      (n) => n >= deliveries,
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    console.info(`${deliveries} deliveries attempted once, ${Date.now() - started} ms after the command`);
  };

  it('keeps answering commands, holds at most 1,000 children, and every delivery still gets its workflow', async () => {
    const created = await command(
      `create (${ENDPOINTS} deliveries)`,
      `offerings/${w.offering.offeringId}/subscriptions`,
      w.investor.token,
      subscriptionBody(w.offering.securityClassId),
    );
    expect(created.status).toBe(201);
    const s = created.body.data as { id: string };
    await attempted(ENDPOINTS);
    expect(
      (await command('request-signature', `subscriptions/${s.id}/request-signature`, w.investor.token)).status,
    ).toBe(200);
    const sign = { signature: 'Ada Lovelace', signedAt: '2026-11-21T10:00:00Z' };
    const signed = await command(
      `sign (${2 * ENDPOINTS} deliveries)`,
      `subscriptions/${s.id}/sign-agreement`,
      w.investor.token,
      sign,
    );
    expect(signed.status).toBe(200);
    await attempted(2 * ENDPOINTS);
    const wire = { paymentMethod: 'wire' };
    expect((await command('submit', `subscriptions/${s.id}/submit-for-review`, w.investor.token, wire)).status).toBe(
      200,
    );
    // The third event's deliveries take the subscription past 2,000 pending.
    const asked = await command(
      `request-info (${DELIVERIES} deliveries)`,
      `subscriptions/${s.id}/request-info`,
      w.staff.token,
      { reason: 'Proof of funds' },
    );
    expect([asked.status, asked.body.data?.status]).toEqual([200, 'pending_review']);
    await attempted(DELIVERIES);

    const parent = svc.temporal.workflow.getHandle(subscriptionWorkflowId(s.id));
    const pendingChildren = (await parent.describe()).raw.pendingChildren?.length ?? 0;
    console.info(`pending children of the subscription's run: ${pendingChildren}; POSTs answered: ${answered}`);
    expect(pendingChildren).toBeLessThanOrEqual(1_000);
    // Every delivery has its workflow: the parent's children, and the rest started by the engine
    // from the queue, the last event's as top-level workflows. None has ended: each waits an hour.
    expect(await count('select count(*) as n from webhook_queue where org_id = ?')).toBe(0);
    expect(
      await count(
        `select count(*) as n from webhook_deliveries where org_id = ? and next_attempt_at > now() + interval '30 minutes'`,
      ),
    ).toBe(DELIVERIES);
    const [last] = await svc.orm.em.getConnection().execute<{ id: string }[]>(
      `select d.id from webhook_deliveries d join events e on e.id = d.event_id
          where e.type = 'subscription.info_requested' and d.org_id = ? limit 1`,
      [w.org],
    );
    const topLevel = await svc.temporal.workflow.getHandle(deliveryWorkflowId(last!.id)).describe();
    expect([topLevel.status.name, topLevel.parentExecution]).toEqual(['RUNNING', undefined]);

    // The subscription still takes commands (an approval no endpoint wants), and its history replays
    // on today's code.
    const approved = await command('approve', `subscriptions/${s.id}/approve`, w.staff.token);
    expect([approved.status, approved.body.data?.status]).toEqual([200, 'approved']);
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! }, dataConverter: testDataConverter() },
      await parent.fetchHistory(),
    );
  }, 600_000);
});
