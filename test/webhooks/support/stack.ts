import type { Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { BehaviourSet } from '../../../lib/behaviour-set';
import { actor, newOrg, type Actor } from '../../support/fixtures';
import { http } from '../../support/http';
import { startService, type TestService } from '../../support/service';
import { until } from '../../support/wait';
import { PATHS, registerHook } from './hooks';
import { Receiver } from './receiver';

/**
 * The webhook tests' stack: the service (loopback receivers allowed), a receiver, a client, and a
 * staff member of an organisation of their own (a signed token only: nothing is written for it).
 */
export interface WebhookStack {
  svc: TestService;
  receiver: Receiver;
  api: ReturnType<typeof http>;
  staff: Actor;
}

/**
 * Starts the service (with `env` on top of loopback delivery) and the receiver side by side: the
 * setup most webhook suites share, `({ svc, receiver, api, staff } = await startWebhookStack(set))`
 * in their beforeAll and `stopWebhookStack({ svc, receiver })` in their afterAll.
 */
export async function startWebhookStack(set: BehaviourSet, env: Record<string, string> = {}): Promise<WebhookStack> {
  const [svc, receiver] = await Promise.all([
    startService({ set, env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true', ...env } }),
    Receiver.start(),
  ]);
  return { svc, receiver, api: http(svc.baseUrl), staff: await actor(svc, newOrg(), ['staff']) };
}

export async function stopWebhookStack(stack: Partial<WebhookStack> | undefined): Promise<void> {
  await stack?.svc?.stop();
  await stack?.receiver?.stop();
}

/** Asks for a test ping to the endpoint (answered 202); its delivery id. */
export async function testPing(
  api: ReturnType<typeof http>,
  who: Actor,
  endpointId: string,
  set: BehaviourSet = 'A',
): Promise<string> {
  const res = await api.post(`${PATHS[set].endpoints}/${endpointId}/test`, who.token);
  expect(res.status).toBe(202);
  return res.body.data.delivery_id;
}

/** A delivery as the API shows it (undefined until the fan-out records it). */
export const deliveryDetail = (api: ReturnType<typeof http>, who: Actor, id: string, set: BehaviourSet = 'A') =>
  api.get(`${PATHS[set].deliveries}/${id}`, who.token).then((r) => r.body.data);

/** An endpoint as the API shows it. */
export const endpointDetail = (api: ReturnType<typeof http>, who: Actor, id: string, set: BehaviourSet = 'A') =>
  api.get(`${PATHS[set].endpoints}/${id}`, who.token).then((r) => r.body.data);

/** Pings the endpoint and waits for its first attempt to be recorded with its result; that attempt. */
export async function firstAttempt(
  api: ReturnType<typeof http>,
  who: Actor,
  endpointId: string,
  set: BehaviourSet = 'A',
) {
  const id = await testPing(api, who, endpointId, set);
  return until('the first attempt recorded', async () => {
    const d = await deliveryDetail(api, who, id, set);
    return d?.attempts?.[0]?.duration_ms != null ? d.attempts[0] : undefined;
  });
}

/**
 * A hook that answers 500, its endpoint throttled to 1 delivery a second, and `count` test pings
 * queued to it: the pings wait for their turn, and every attempt fails.
 */
export async function throttledFailingPings(
  stack: Pick<WebhookStack, 'svc' | 'receiver' | 'api'>,
  staff: Actor,
  hook: string,
  count: number,
) {
  const endpoint = await registerHook(stack.svc, stack.receiver, staff, hook, ['*'], { defaultStatus: 500 });
  const set = stack.svc.set;
  expect(
    (await stack.api.patch(`${PATHS[set].endpoints}/${endpoint.id}`, staff.token, { rateLimitPerSecond: 1 })).status,
  ).toBe(200);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await testPing(stack.api, staff, endpoint.id, set));
  return { endpoint, ids };
}

/** Listens on a loopback port; the server's base URL. */
export async function listenOnLoopback(server: Server, scheme: 'http' | 'https'): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes a server and every connection it holds. */
export async function closeServer(server: (Server & { closeAllConnections?(): void }) | undefined): Promise<void> {
  server?.closeAllConnections?.();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
}
