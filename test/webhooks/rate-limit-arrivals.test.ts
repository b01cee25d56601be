import { actor, newOrg, type Actor } from '../support/fixtures';
import { freePort } from '../../scripts/lib/free-port';
import { TcpRelay, hostAndPort } from '../support/tcp-relay';
import { until } from '../support/wait';
import { PATHS } from './support/hooks';
import type { ReceivedDelivery } from './support/receiver';
import { deliveryDetail, startWebhookStack, stopWebhookStack, testPing, type WebhookStack } from './support/stack';

/**
 * An endpoint's rate limit as its receiver counts arrivals, when one request is slow on its way
 * (docs/decisions/0339-one-second-rule-at-the-gate.md): the relay in front of the receiver holds a
 * request's bytes for 600 ms, so it arrives late. Spacing the starts 1,020 ms apart at 1/s would then
 * let the next one arrive 420 ms after it; no start goes before a second after the POST before it
 * ended, so any two arrivals are a second apart. First attempts (the dispatcher's in `engine` shape,
 * the gate's in `workflow` shape) and a person's retries (the gate's in both) keep it.
 */
describe('a rate limit holds as the receiver counts arrivals, a request slow on its way', () => {
  const set = 'A';
  let stack: WebhookStack;
  let relay: TcpRelay;

  beforeAll(async () => {
    stack = await startWebhookStack(set, { WEBHOOK_CIRCUIT_FAILURES: '1000' });
    relay = new TcpRelay(await freePort(), hostAndPort(stack.receiver.base));
    await relay.open();
  });
  afterAll(async () => {
    await relay?.close();
    await stopWebhookStack(stack);
  });

  /** An endpoint at 1 delivery a second, reached through the relay; `status` is what the receiver answers. */
  async function slowedEndpoint(staff: Actor, hook: string, status: number) {
    const res = await stack.api.post(PATHS[set].endpoints, staff.token, {
      url: `http://127.0.0.1:${relay.port}${new URL(stack.receiver.url(hook)).pathname}`,
      eventTypes: ['*'],
      rateLimitPerSecond: 1,
    });
    expect([res.status, res.body.data?.rate_limit_per_second]).toEqual([201, 1]);
    const endpoint = { id: res.body.data.id as string, secret: res.body.data.signing_secret as string };
    await stack.receiver.plan(hook, { secret: endpoint.secret, defaultStatus: status });
    return endpoint;
  }

  /** The gaps between consecutive arrivals, in ms. */
  const gaps = (got: readonly ReceivedDelivery[]) => {
    const at = got.map((d) => d.at).sort((a, b) => a - b);
    return at.slice(1).map((t, i) => t - at[i]!);
  };

  it('spaces first attempts a second apart after the first arrives 600 ms late', async () => {
    const staff = await actor(stack.svc, newOrg(), ['staff']);
    const endpoint = await slowedEndpoint(staff, 'slow-way-first', 200);
    relay.holdNext(600);
    for (let i = 0; i < 3; i++) await testPing(stack.api, staff, endpoint.id, set);
    const got = await stack.receiver.waitFor('slow-way-first', 3);
    expect(got).toHaveLength(3);
    // One clock: the receiver stamps an arrival before it answers, the sender's POST ends after.
    for (const gap of gaps(got)) expect(gap).toBeGreaterThanOrEqual(999);
  });

  it("spaces a person's retries a second apart after the first arrives 600 ms late", async () => {
    const staff = await actor(stack.svc, newOrg(), ['staff']);
    const endpoint = await slowedEndpoint(staff, 'slow-way-retry', 500);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await testPing(stack.api, staff, endpoint.id, set));
    for (const id of ids)
      await until(`delivery ${id} failed its first attempt`, async () =>
        (await deliveryDetail(stack.api, staff, id, set))?.status === 'failed' ? true : undefined,
      );
    await stack.receiver.plan('slow-way-retry', { secret: endpoint.secret, defaultStatus: 200 });
    const from = Date.now();
    relay.holdNext(600);
    // All three asked for at once.
    const asked = await Promise.all(
      ids.map((id) => stack.api.post(`${PATHS[set].deliveries}/${id}/retry`, staff.token)),
    );
    expect(asked.map((r) => r.status)).toEqual([202, 202, 202]);
    for (const id of ids)
      await until(`delivery ${id} retried with success`, async () =>
        (await deliveryDetail(stack.api, staff, id, set))?.status === 'success' ? true : undefined,
      );
    const retried = (await stack.receiver.received('slow-way-retry')).filter((d) => d.at >= from);
    expect(retried).toHaveLength(3);
    for (const gap of gaps(retried)) expect(gap).toBeGreaterThanOrEqual(999);
  });
});
