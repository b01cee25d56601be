import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { actor, approveKyc, createSubscription, newOrg, openOffering, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { until } from '../support/wait';
import { sandboxSecret, signSandboxBody, SANDBOX_SIGNATURE_HEADER } from '../../payments/sandbox/signature';
import type { SandboxEventData, SandboxEventType } from '../../payments/sandbox/sandbox-events';

export interface World {
  api: ReturnType<typeof http>;
  staff: Actor;
  /** Admins refund and void (docs/decisions/0284-refunds.md). */
  admin: Actor;
  investor: Actor;
  offering: { offeringId: string; securityClassId: string };
}

/** Staff, a KYC-approved investor and an open offering at 12.50 a unit. */
export async function world(svc: TestService): Promise<World> {
  const api = http(svc.baseUrl);
  const org = newOrg();
  const staff = await actor(svc, org, ['staff']);
  const admin = await actor(svc, org, ['admin']);
  const investor = await actor(svc, org, ['investor'], { kycCompleted: true });
  await approveKyc(svc, investor);
  const offering = await openOffering(svc, staff, '12.50');
  return { api, staff, admin, investor, offering };
}

/** Where the processor sends the investor's browser after a session (the tests only need the URLs). */
export const RETURN_URLS = {
  successUrl: 'https://investor.example/paid',
  cancelUrl: 'https://investor.example/cancelled',
};

/** Opens a checkout session (Set B) as the investor; fails the test unless it opened. */
export async function openCheckout(
  w: World,
  id: string,
  paymentMethod = 'card',
): Promise<{ session_id: string; session_url: string }> {
  const res = await w.api.post(`/issuance/subscriptions/${id}/create-checkout-session`, w.investor.token, {
    paymentMethod,
    ...RETURN_URLS,
  });
  if (res.status !== 200) throw new Error(`checkout: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** A subscription of `units` units, created and signed: pending_payment. */
export async function signedSubscription(w: World, units = 4): Promise<string> {
  const created = await createSubscription(w.api, w.investor.token, w.offering, { unitsSubscribed: units });
  if (created.status !== 201) throw new Error(`create: ${JSON.stringify(created.body)}`);
  const id = created.body.data.id as string;
  const signed = await w.api.post(`/issuance/subscriptions/${id}/sign-agreement`, w.investor.token, {
    signature: 'Ada Investor',
    signedAt: new Date().toISOString(),
  });
  if (signed.status !== 200) throw new Error(`sign: ${JSON.stringify(signed.body)}`);
  return id;
}

export async function subscription(w: World, id: string): Promise<Record<string, any>> {
  const res = await w.api.get(`/issuance/subscriptions/${id}`, w.investor.token);
  if (res.status !== 200) throw new Error(`get: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Waits until the subscription, read through the API, matches `expected`; fails with the last one seen. */
export const reaches = (
  w: World,
  id: string,
  expected: Record<string, unknown>,
  timeoutMs = 20_000,
): Promise<Record<string, any>> =>
  until(
    `subscription ${id} to reach ${JSON.stringify(expected)}`,
    () => subscription(w, id),
    (last) => Object.entries(expected).every(([k, v]) => last[k] === v),
    { timeoutMs, intervalMs: 150 },
  );

/** A sandbox notification signed with the service's sandbox secret, as the sandbox itself sends one. */
export async function postSandboxEvent(
  svc: TestService,
  id: string,
  type: SandboxEventType | string,
  data: SandboxEventData,
  signature?: string,
) {
  const body = JSON.stringify({ id, type, created: new Date().toISOString(), data });
  const res = await fetch(`${svc.baseUrl}/payments/sandbox/notifications`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [SANDBOX_SIGNATURE_HEADER]: signature ?? signSandboxBody(sandboxSecret(svc.config), body),
    },
    body,
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, body: (await res.json()) as any };
}

export async function processedNotifications(
  svc: TestService,
  processor: string,
): Promise<{ event_id: string; outcome: string; subscription_id: string | null }[]> {
  return svc.orm.em
    .getConnection()
    .execute(
      'select event_id, outcome, subscription_id from payment_notifications where processor = ? order by received_at',
      [processor],
    );
}

/** The investor's own site: where a processor sends the browser after a session. */
export async function returnSite(): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<h1 data-testid="back">Back at the investor site: ${req.url}</h1>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
