import { ENDPOINT_FAILING } from '../../domain/events';
import { registry } from '../../lib/runtime/metrics';
import { freePort } from '../../scripts/lib/free-port';
import { TcpRelay } from '../support/tcp-relay';
import { until } from '../support/wait';
import { ConnectProxy } from './support/connect-proxy';
import { registerHook } from './support/hooks';
import {
  deliveryDetail,
  endpointDetail,
  startWebhookStack,
  stopWebhookStack,
  testPing,
  type WebhookStack,
} from './support/stack';

const proxyFailures = async () => {
  const counter = registry.getSingleMetric('tranche_webhook_proxy_failures_total');
  return counter ? ((await counter.get()).values[0]?.value ?? 0) : 0;
};

/**
 * An egress proxy that is down is the sender's outage, not the receivers'
 * (docs/decisions/0405-egress-through-a-connect-proxy.md): each attempt fails with the proxy's words and
 * is retried on the schedule, but no endpoint's circuit counts it, no failing spell starts (the clock that
 * disables an endpoint) and no `webhook.endpoint.failing` is published; the proxy's failures are counted
 * (`tranche_webhook_proxy_failures_total`) and logged. The thresholds are 1 here, so a single counted
 * failure would open the circuit and publish `failing`. A real CONNECT proxy behind a TCP relay: the relay
 * closed is a proxy that refuses connections, `refuse` one that answers CONNECT with a 502. Runs in both
 * delivery shapes (scripts/test.sh runs test/webhooks in each).
 */
describe('an egress proxy outage', () => {
  let stack: WebhookStack;
  let proxy: ConnectProxy;
  let relay: TcpRelay;
  const set = 'A' as const;

  beforeAll(async () => {
    proxy = await ConnectProxy.start();
    relay = new TcpRelay(await freePort(), { host: '127.0.0.1', port: proxy.port });
    await relay.open();
    stack = await startWebhookStack(set, {
      WEBHOOK_HTTP_PROXY: `http://127.0.0.1:${relay.port}`,
      WEBHOOK_CIRCUIT_FAILURES: '1',
      WEBHOOK_FAILING_AFTER_ATTEMPTS: '1',
    });
  }, 120_000);
  afterAll(async () => {
    await stopWebhookStack(stack);
    await relay?.close();
    await proxy?.stop();
  });

  const outages = [
    {
      outage: 'refuses connections',
      error: 'proxy unreachable: ECONNREFUSED',
      down: () => relay.close(),
      up: () => relay.open(),
    },
    {
      outage: 'answers CONNECT with a 502',
      error: 'proxy refused CONNECT: 502',
      // Its tunnels kept alive from before are cut too (the relay closed and opened): each attempt asks anew.
      down: async () => {
        proxy.refuse = 502;
        await relay.close();
        await relay.open();
      },
      up: async () => void (proxy.refuse = null),
    },
  ];

  it.each(outages)(
    'fails attempts while the proxy $outage without counting them against the endpoint, and delivers once it is back',
    async ({ outage, error, down, up }) => {
      const { api, staff, svc, receiver } = stack;
      const hook = `outage-${outage.split(' ')[0]}`;
      const endpoint = await registerHook(svc, receiver, staff, hook, ['*']);
      const countedBefore = await proxyFailures();
      await down();
      let failed;
      try {
        const deliveryId = await testPing(api, staff, endpoint.id, set);
        failed = await until('the first attempt recorded, and the next one planned', async () => {
          const d = await deliveryDetail(api, staff, deliveryId, set);
          return d?.attempts?.[0]?.duration_ms != null && d.next_attempt_at ? d : undefined;
        });
        expect(failed.attempts[0]).toMatchObject({ response_status: null, error });
        // Not the endpoint's failure: its circuit stays closed, no failing spell starts, nothing is published.
        expect((await endpointDetail(api, staff, endpoint.id, set)).circuit).toMatchObject({
          state: 'closed',
          consecutive_failures: 0,
        });
        const knex = svc.orm.em.getConnection().getKnex();
        expect(await knex('webhook_endpoints').where({ id: endpoint.id }).first('status', 'failing_since')).toEqual({
          status: 'enabled',
          failing_since: null,
        });
        expect(
          await knex('events').where({ type: ENDPOINT_FAILING }).whereRaw(`data->>'endpoint_id' = ?`, [endpoint.id]),
        ).toEqual([]);
        // Seen all the same: counted as the proxy's.
        expect(await proxyFailures()).toBeGreaterThan(countedBefore);
      } finally {
        await up();
      }
      // Retried on the schedule (30 s on, spec §6.5), through the proxy that is back.
      const [got] = await receiver.waitFor(hook, 1, 60_000);
      expect(got!.verified).toBe(true);
      const delivered = await until('the retry recorded', async () => {
        const d = await deliveryDetail(api, staff, failed.id, set);
        return d?.status === 'success' ? d : undefined;
      });
      expect(delivered.attempts.map((a: { response_status: number | null }) => a.response_status)).toEqual([null, 200]);
    },
    120_000,
  );
});
