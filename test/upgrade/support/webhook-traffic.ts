import { NOTIFICATION_PATHS } from '../../../api/notifications/paths';
import { sql } from '../../faults/support/subscription-flow';
import { until } from '../../support/wait';
import type { Receiver } from '../../webhooks/support/receiver';
import type { Answers } from './answers';
import type { ServiceGroup } from './service-group';

/**
 * Webhook traffic through one group during the roll: an endpoint for every event type of the group's
 * organisation (its subscriptions' events arrive there too) on the test's receiver, and test pings sent
 * through the balancer at a steady rate. The receiver refuses the first `failFirst` requests with 500, so
 * some deliveries wait for their second attempt across a replacement.
 */
export async function webhookTraffic(o: {
  group: ServiceGroup;
  answers: Answers;
  receiver: Receiver;
  staff: string;
  perSecond: number;
  failFirst: number;
}) {
  const api = o.answers.client(o.group.baseUrl);
  const hook = `upgrade-${o.group.set.toLowerCase()}`;
  const endpoints = `/notifications${NOTIFICATION_PATHS[o.group.set].endpoints}`;
  const res = await api.post(endpoints, o.staff, { url: o.receiver.url(hook), description: hook, eventTypes: ['*'] });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
  const endpointId = res.body.data.id as string;
  const plan = (failFirst: number) =>
    o.receiver.plan(hook, {
      secret: res.body.data.signing_secret,
      responses: Array.from({ length: failFirst }, () => 500),
      defaultStatus: 204,
    });
  await plan(o.failFirst);
  let sent = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = Date.now();
      // Any answer but 202 is counted in `answers` (a 5xx fails the test there); the traffic goes on.
      const ping = await api.post(`${endpoints}/${endpointId}/test`, o.staff).catch(() => undefined);
      if (ping?.status === 202) sent++;
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 / o.perSecond - (Date.now() - t0))));
    }
  })();
  return {
    endpointId,
    pingsSent: () => sent,
    /** Refuses the next `n` requests again (a phase's first deliveries wait for attempt 2). */
    failNext: (n: number) => plan(n),
    async stop(): Promise<void> {
      running = false;
      await loop;
    },
    /**
     * Waits until every delivery the group's database holds for the endpoint has reached the receiver
     * with a 2xx and a signature that verifies; answers the counts.
     */
    async allArrived(timeoutMs = 240_000) {
      const expected = async () =>
        (await sql(o.group.databaseUrl, 'select id from webhook_deliveries where endpoint_id = $1', [endpointId])).map(
          (r) => r.id as string,
        );
      const arrived = async () => {
        const got = await o.receiver.received(hook);
        return {
          requests: got.length,
          ok: new Set(got.filter((d) => d.verified && d.status < 300).map((d) => d.headers['x-service-delivery-id']!)),
        };
      };
      const missing = await until(
        `every delivery to ${hook} arrived`,
        async () => {
          const [want, got] = await Promise.all([expected(), arrived()]);
          return want.filter((id) => !got.ok.has(id));
        },
        (left) => left.length === 0,
        { timeoutMs, intervalMs: 1000 },
      ).catch(async () => {
        const [want, got] = await Promise.all([expected(), arrived()]);
        return want.filter((id) => !got.ok.has(id));
      });
      const [want, got] = await Promise.all([expected(), arrived()]);
      return { deliveries: want.length, arrived: got.ok.size, requests: got.requests, missing };
    },
  };
}

export type WebhookTraffic = Awaited<ReturnType<typeof webhookTraffic>>;
