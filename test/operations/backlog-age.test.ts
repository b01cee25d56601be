import type { Server } from 'node:http';
import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { serveMetrics } from '../../lib/runtime/metrics-server';
import { createDeliveryEngine, type RunningEngine } from '../../webhooks';
import { startService, type TestService } from '../support/service';
import { until } from '../support/wait';
import { Receiver } from '../webhooks/support/receiver';
import { PATHS, registerHook } from '../webhooks/support/hooks';

const AGE = 'tranche_webhook_oldest_pending_delivery_age_seconds';
const age = (text: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${AGE} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
};

/**
 * The backlog's age the TrancheWebhookBacklogOld alert reads (docs/decisions/0410-operator-alerts.md):
 * with no engine running a delivery waits `pending`, and the API's gauge shows how long; an engine
 * that delivers it brings it back to 0.
 */
describe('the webhook backlog age metric', () => {
  let svc: TestService;
  let receiver: Receiver;
  let metricsServer: Server;
  let engine: RunningEngine | undefined;
  const scrape = async () =>
    (await fetch(`http://127.0.0.1:${(metricsServer.address() as { port: number }).port}/metrics`)).text();
  beforeAll(async () => {
    [svc, receiver] = await Promise.all([
      startService({ set: 'A', engine: false, env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } }),
      Receiver.start(),
    ]);
    metricsServer = await serveMetrics('127.0.0.1', 0, 'test');
  }, 120_000);
  afterAll(async () => {
    metricsServer?.close();
    await engine?.stop();
    await svc?.stop();
    await receiver?.stop();
  });

  it('grows while a delivery waits for the engine, leaves out one whose circuit is open, and is 0 once delivered', async () => {
    expect(age(await scrape())).toBe(0);
    const staff = await actor(svc, newOrg(), ['staff']);
    const hook = `backlog-${Date.now()}`;
    const endpoint = await registerHook(svc, receiver, staff, hook, ['*'], { defaultStatus: 204 });
    const ping = await http(svc.baseUrl).post(`${PATHS.A.endpoints}/${endpoint.id}/test`, staff.token);
    expect(ping.status).toBe(202);

    const first = await until(
      'the backlog to be over a second old',
      async () => age(await scrape()),
      (a) => (a ?? 0) > 1,
      {
        timeoutMs: 20_000,
        intervalMs: 250,
      },
    );
    const later = await until(
      'the backlog to grow',
      async () => age(await scrape()),
      (a) => (a ?? 0) > first! + 1,
      {
        timeoutMs: 20_000,
        intervalMs: 250,
      },
    );
    expect(later).toBeGreaterThan(first!);

    // An endpoint whose circuit is open holds its deliveries for its receiver, not the engine: not counted.
    // (Set in the engine's table, as three timeouts would: the circuit's own tests open it for real.)
    const knex = svc.orm.em.getConnection().getKnex();
    await knex('webhook_endpoint_flow')
      .insert({ endpoint_id: endpoint.id, circuit_state: 'open' })
      .onConflict('endpoint_id')
      .merge(['circuit_state']);
    expect(age(await scrape())).toBe(0);
    await knex('webhook_endpoint_flow').where({ endpoint_id: endpoint.id }).update({ circuit_state: 'closed' });
    expect(age(await scrape())).toBeGreaterThan(later!);

    engine = await createDeliveryEngine({ orm: svc.orm, config: svc.config }).start({
      temporal: svc.temporal,
      taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
    });
    await receiver.waitFor(hook, 1);
    await until(
      'the backlog to be empty',
      async () => age(await scrape()),
      (a) => a === 0,
      {
        timeoutMs: 20_000,
        intervalMs: 250,
      },
    );
  }, 90_000);
});
