import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { send, shippedGateway } from './support/gateway';
import { secondInstance } from './support/second-instance';

/**
 * Who a request counts against (docs/decisions/0273-client-addresses-from-trusted-hops.md). X-Forwarded-For is trusted
 * only when configured, limits are counted in PostgreSQL so every API instance shares them, and
 * processor notifications are not throttled as if they were one investor's writes.
 */
describe('client addresses and shared rate limits', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({
      set: 'A',
      env: { WRITE_RATE_LIMIT: '3', WRITE_RATE_WINDOW_SECONDS: '60', DEV_IDP_ENABLED: 'true' },
    });
  }, 120_000);
  afterAll(() => svc?.stop());

  // Writes with an invented token count against the client address; each test uses its own address.
  const write = (baseUrl: string, headers: Record<string, string> = {}) =>
    http(baseUrl)
      .post('/issuance/offerings', 'not-a-token', { name: 'x', currency: 'USD' }, headers)
      .then((r) => r.status);

  it('ignores X-Forwarded-For by default, so a client cannot invent addresses to escape the write limit', async () => {
    // From 127.0.0.3, so the service's own loopback calls (the console's sign-in below) keep their budget.
    const answers: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await send({
        port: Number(new URL(svc.baseUrl).port),
        from: '127.0.0.3',
        method: 'POST',
        path: '/issuance/offerings',
        headers: { authorization: 'Bearer not-a-token', 'x-forwarded-for': `203.0.113.${i + 1}` },
        body: { name: 'x', currency: 'USD' },
      });
      answers.push(res.status);
    }
    expect(answers).toEqual([401, 401, 401, 429, 429]);
  });

  it('counts one limit across API instances', async () => {
    const other = await secondInstance(svc, { TRUST_PROXY: true, TRUST_PROXY_HOPS: 1 });
    const first = await secondInstance(svc, { TRUST_PROXY: true, TRUST_PROXY_HOPS: 1 });
    try {
      const from = { 'x-forwarded-for': '198.51.100.7' };
      const answers = [
        await write(first.baseUrl, from),
        await write(other.baseUrl, from),
        await write(first.baseUrl, from),
        await write(other.baseUrl, from),
      ];
      expect(answers).toEqual([401, 401, 401, 429]);
    } finally {
      await other.stop();
      await first.stop();
    }
  });

  it('behind a trusted proxy, takes the address the proxy appended, not one the client prepended', async () => {
    const behindProxy = await secondInstance(svc, { TRUST_PROXY: true, TRUST_PROXY_HOPS: 1 });
    try {
      const spoofed: number[] = [];
      for (let i = 0; i < 4; i++)
        spoofed.push(await write(behindProxy.baseUrl, { 'x-forwarded-for': `10.9.9.${i}, 198.51.100.20` }));
      expect(spoofed).toEqual([401, 401, 401, 429]);
      // Another real client behind the same proxy has a budget of its own.
      expect(await write(behindProxy.baseUrl, { 'x-forwarded-for': '198.51.100.21' })).toBe(401);
    } finally {
      await behindProxy.stop();
    }
  });

  it('does not count processor notifications against the write limit of the address they come from', async () => {
    const viaProxy = await secondInstance(svc, { TRUST_PROXY: true, TRUST_PROXY_HOPS: 1 });
    try {
      const answers: number[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await http(viaProxy.baseUrl).post(
          '/payments/sandbox/notifications',
          undefined,
          { id: `evt_${i}`, type: 'x', data: {} },
          { 'x-forwarded-for': '192.0.2.50' },
        );
        answers.push(res.status);
      }
      // Unsigned, so each is refused on its signature; none is refused for rate.
      expect(answers).toEqual([400, 400, 400, 400, 400, 400]);
    } finally {
      await viaProxy.stop();
    }
  });

  describe('behind the shipped gateway, which trusts only TRUSTED_PROXIES', () => {
    // The load balancer in front of the gateway is 127.0.0.1 here; 127.0.0.2 is a client reaching
    // the gateway directly. The gateway reaches the API from 127.0.0.1, which the API trusts.
    const LB = '127.0.0.1';
    const CLIENT = '127.0.0.2';
    let api: Awaited<ReturnType<typeof secondInstance>>;
    let gateway: Awaited<ReturnType<typeof shippedGateway>>;
    beforeAll(async () => {
      api = await secondInstance(svc, { TRUST_PROXY: true, TRUST_PROXY_HOPS: 1, TRUSTED_PROXIES: ['127.0.0.1/32'] });
      gateway = await shippedGateway(Number(new URL(api.baseUrl).port), '127.0.0.1/32');
    }, 120_000);
    afterAll(async () => {
      await gateway?.stop();
      await api?.stop();
    });
    const viaGateway = (from: string, forwardedFor: string | null, extra: Partial<Parameters<typeof send>[0]> = {}) =>
      send({
        port: gateway.port,
        from,
        method: 'POST',
        path: '/issuance/offerings',
        headers: { authorization: 'Bearer not-a-token', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
        body: { name: 'x', currency: 'USD' },
        ...extra,
      });

    it('counts a client that forges X-Forwarded-For against its own address', async () => {
      const answers: number[] = [];
      for (let i = 0; i < 5; i++) answers.push((await viaGateway(CLIENT, `203.0.113.${40 + i}`)).status);
      expect(answers).toEqual([401, 401, 401, 429, 429]);
    });

    it('gives each client behind the trusted load balancer a limit of its own', async () => {
      const first: number[] = [];
      for (let i = 0; i < 4; i++) first.push((await viaGateway(LB, '198.51.100.61')).status);
      expect(first).toEqual([401, 401, 401, 429]);
      expect((await viaGateway(LB, '198.51.100.62')).status).toBe(401);
    });

    it('records in the audit trail the address the trusted hops vouch for, never a forged one', async () => {
      const admin = await actor(svc, newOrg(), ['admin']);
      const issue = (from: string, forwardedFor: string) =>
        viaGateway(from, forwardedFor, {
          path: '/identity/api-keys',
          headers: { authorization: `Bearer ${admin.token}`, 'x-forwarded-for': forwardedFor },
          body: { name: `from ${from}` },
        });
      expect((await issue(LB, '198.51.100.63')).status).toBe(201);
      expect((await issue(CLIENT, '198.51.100.64')).status).toBe(201);
      const audit = await http(svc.baseUrl).get('/audit/events?action=api_key.issue', admin.token);
      expect(audit.body.data.items.map((e: any) => [e.after.name, e.actor.client_address]).sort()).toEqual([
        [`from ${LB}`, '198.51.100.63'],
        [`from ${CLIENT}`, CLIENT],
      ]);
    });
  });

  it("records a console action under the person's address, not the API's own loopback", async () => {
    // The person's request reaches an API instance through a trusted proxy, which names them.
    const api = await secondInstance(svc, {
      TRUST_PROXY: true,
      TRUST_PROXY_HOPS: 1,
      TRUSTED_PROXIES: ['127.0.0.1/32'],
    });
    try {
      const org = newOrg();
      const admin = await actor(svc, org, ['admin']);
      const endpoint = await http(svc.baseUrl).post('/notifications/webhook-endpoints', admin.token, {
        url: 'https://93.184.215.14/hook',
        eventTypes: ['*'],
      });
      const cookie = await consoleSignIn(svc, org);
      const person = { 'x-forwarded-for': '198.51.100.70' };
      const deleted = await fetch(`${api.baseUrl}/console/webhooks/${endpoint.body.data.id}/delete`, {
        method: 'POST',
        headers: { cookie, origin: new URL(svc.config.PUBLIC_BASE_URL!).origin, ...person },
        redirect: 'manual',
        signal: AbortSignal.timeout(30_000),
      });
      expect(deleted.status).toBeLessThan(400);
      const audit = await http(svc.baseUrl).get('/audit/events?action=webhook_endpoint.delete', admin.token);
      expect(audit.body.data.items.map((e: any) => e.actor.client_address)).toEqual(['198.51.100.70']);
      // The console's forwarding header from anyone else is ignored.
      const forged = await http(api.baseUrl).post(
        '/identity/api-keys',
        admin.token,
        { name: 'x' },
        {
          'x-tranche-console-client': '192.0.2.99',
          'x-tranche-console-proof': 'guess',
        },
      );
      expect(forged.status).toBe(201);
      const issued = await http(svc.baseUrl).get('/audit/events?action=api_key.issue', admin.token);
      expect(issued.body.data.items.map((e: any) => e.actor.client_address)).toEqual(['127.0.0.1']);
    } finally {
      await api.stop();
    }
  });
});

/** A staff console session through the development identity provider, as a browser would get one; its cookie. */
async function consoleSignIn(svc: TestService, orgId: string): Promise<string> {
  const get = (url: string, cookie?: string) =>
    fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {}, signal: AbortSignal.timeout(30_000) });
  const start = await get(`${svc.baseUrl}/console/auth/start`);
  const pending = start.headers.get('set-cookie')!.split(';')[0]!;
  const asked = new URL(start.headers.get('location')!).searchParams;
  const form = new URLSearchParams({ ...Object.fromEntries(asked), user_id: 'address-staff', org_id: orgId });
  form.set('roles', 'staff');
  const authorized = await fetch(`${svc.baseUrl}/dev-idp/authorize`, {
    method: 'POST',
    body: form,
    redirect: 'manual',
    signal: AbortSignal.timeout(30_000),
  });
  const back = new URL(authorized.headers.get('location')!);
  const signedIn = await get(`${svc.baseUrl}/console/auth/callback${back.search}`, pending);
  return signedIn.headers
    .getSetCookie()
    .find((c) => c.startsWith('tranche_console='))!
    .split(';')[0]!;
}
