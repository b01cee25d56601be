import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ConfigError, loadConfig } from '../../lib/runtime/config';
import { freePort } from '../../scripts/lib/free-port';
import type { Actor } from '../support/fixtures';
import { until } from '../support/wait';
import { answeringNameserver, type Nameserver } from '../security/support/nameservers';
import { noProxyMatcher } from '../../webhooks/egress/no-proxy';
import { ConnectProxy } from './support/connect-proxy';
import { PATHS } from './support/hooks';
import { anEvent, publish } from './support/publish';
import {
  closeServer,
  deliveryDetail,
  firstAttempt,
  startWebhookStack,
  stopWebhookStack,
  testPing,
  type WebhookStack,
} from './support/stack';
import { throwawayCa } from './support/throwaway-ca';

const CREDENTIALS = 'tranche:pr%40xy-secret';
const PROXY_AUTHORIZATION = `Basic ${Buffer.from('tranche:pr@xy-secret').toString('base64')}`;

/** A receiver of the test's own on a fresh port (a fresh origin, so a fresh connection): what reached it. */
async function hookServer(host = '127.0.0.1') {
  const got: { path: string; host: string }[] = [];
  const server = createHttpServer((req, res) => {
    got.push({ path: req.url!, host: String(req.headers.host) });
    req.resume();
    req.on('end', () => res.writeHead(200).end('ok'));
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return { got, port: (server.address() as AddressInfo).port, close: () => closeServer(server) };
}

/**
 * Egress through an HTTP CONNECT proxy (docs/decisions/0405-egress-through-a-connect-proxy.md): a real
 * proxy on 127.0.0.1 that records every CONNECT and demands our credentials; names other than
 * localhost resolved by a nameserver of the test's (every name answers its current address list), so
 * a name can be moved to a refused network between registration and delivery. Runs in both
 * delivery shapes (scripts/test.sh runs test/webhooks in each).
 */
describe('deliveries through an egress proxy', () => {
  let stack: WebhookStack;
  let proxy: ConnectProxy;
  let dns: Nameserver;
  let staff: Actor;
  /** What every name resolves to; changed in place by the test that moves a name. */
  const answers = ['127.0.0.1'];
  let receiverPort: string;
  const set = 'A' as const;

  beforeAll(async () => {
    [proxy, dns] = await Promise.all([
      ConnectProxy.start({ requireAuthorization: PROXY_AUTHORIZATION }),
      answeringNameserver(answers),
    ]);
    stack = await startWebhookStack(set, {
      DNS_SERVERS: dns.address,
      WEBHOOK_HTTP_PROXY: proxy.url(CREDENTIALS),
      WEBHOOK_NO_PROXY: '127.0.0.2, direct.example',
    });
    staff = stack.staff;
    receiverPort = new URL(stack.receiver.base).port;
  }, 120_000);
  afterAll(async () => {
    await stopWebhookStack(stack);
    await proxy?.stop();
    await dns?.stop();
  });

  const register = async (url: string, more: Record<string, unknown> = {}) => {
    const res = await stack.api.post(PATHS[set].endpoints, staff.token, { url, eventTypes: ['*'], ...more });
    expect([res.status, res.body.error]).toEqual([201, undefined]);
    return res.body.data as { id: string; signing_secret: string };
  };
  const connectsSince = (n: number) => proxy.connects.slice(n);

  it('sends test sends and event deliveries through the proxy, CONNECT naming the address the guard resolved', async () => {
    const before = proxy.connects.length;
    // A name (resolved by the service to 127.0.0.1), so the Host header and the CONNECT differ.
    const e = await register(`http://localhost:${receiverPort}/hooks/via-proxy`);
    await stack.receiver.plan('via-proxy', { secret: e.signing_secret });
    expect(await firstAttempt(stack.api, staff, e.id)).toMatchObject({ response_status: 200, error: null });
    // An event the service publishes, on the same endpoint.
    await publish(stack.svc, [anEvent(staff.orgId)]);
    const got = await stack.receiver.waitFor('via-proxy', 2);
    expect(got.map((g) => [g.verified, g.headers.host])).toEqual([
      [true, `localhost:${receiverPort}`],
      [true, `localhost:${receiverPort}`],
    ]);
    // The proxy was asked for the resolved address, never the name, with our credentials.
    const seen = connectsSince(before);
    expect(seen.length).toBeGreaterThanOrEqual(1);
    for (const c of seen)
      expect(c).toEqual({ target: `127.0.0.1:${receiverPort}`, authorization: PROXY_AUTHORIZATION, answered: 200 });
  });

  it('fetches OAuth2 tokens through the proxy too', async () => {
    const tokenRequests: string[] = [];
    const tokens: Server = createHttpServer((req, res) => {
      tokenRequests.push(String(req.headers.host));
      req.resume();
      req.on('end', () =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: 'tunnelled-token', token_type: 'Bearer', expires_in: 3600 })),
      );
    });
    await new Promise<void>((r) => tokens.listen(0, '127.0.0.1', r));
    const tokenPort = (tokens.address() as AddressInfo).port;
    const hook = await hookServer();
    try {
      const before = proxy.connects.length;
      const e = await register(`http://127.0.0.1:${hook.port}/oauth`, {
        authentication: {
          type: 'oauth2_client_credentials',
          tokenUrl: `http://localhost:${tokenPort}/token`,
          clientId: 'tranche',
          clientSecret: 'client-secret-0123456789',
          scope: 'webhooks',
        },
      });
      expect(await firstAttempt(stack.api, staff, e.id)).toMatchObject({ response_status: 200, error: null });
      expect(tokenRequests).toEqual([`localhost:${tokenPort}`]);
      expect(hook.got).toEqual([{ path: '/oauth', host: `127.0.0.1:${hook.port}` }]);
      expect(
        connectsSince(before)
          .map((c) => c.target)
          .sort(),
      ).toEqual([`127.0.0.1:${tokenPort}`, `127.0.0.1:${hook.port}`].sort());
    } finally {
      await closeServer(tokens);
      await hook.close();
    }
  });

  it('runs TLS with the client certificate inside the tunnel (mTLS), the target named in SNI', async () => {
    const ca = throwawayCa('Proxy Test CA');
    const shown: { cn: string; sni: string | false | null }[] = [];
    const receiver = createHttpsServer(
      { ...ca.server(), ca: ca.cert, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const socket = req.socket as TLSSocket;
        shown.push({ cn: String(socket.getPeerCertificate().subject?.CN ?? ''), sni: socket.servername });
        req.resume();
        req.on('end', () => res.writeHead(200).end('ok'));
      },
    );
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as AddressInfo).port;
    try {
      const client = ca.client('tranche-sender');
      const before = proxy.connects.length;
      // `localhost` is a name the throwaway server certificate holds.
      const e = await register(`https://localhost:${port}/mtls`, {
        authentication: { type: 'mtls', clientCertificate: client.cert, clientKey: client.key, caCertificate: ca.cert },
      });
      expect(await firstAttempt(stack.api, staff, e.id)).toMatchObject({ response_status: 200, error: null });
      expect(shown).toEqual([{ cn: 'tranche-sender', sni: 'localhost' }]);
      expect(connectsSince(before).map((c) => c.target)).toEqual([`127.0.0.1:${port}`]);
    } finally {
      await closeServer(receiver);
      ca.dispose();
    }
  });

  it('refuses a name that resolves to a refused network with the guard’s error, and never asks the proxy for it', async () => {
    const e = await register('https://moved.example/hook');
    const before = proxy.connects.length;
    answers[0] = '10.0.0.7'; // after registration, the name now points into a private network
    try {
      const attempt = await firstAttempt(stack.api, staff, e.id);
      expect(attempt).toMatchObject({ response_status: null, error: 'WEBHOOK_URL_FORBIDDEN' });
    } finally {
      answers[0] = '127.0.0.1';
    }
    expect(connectsSince(before)).toEqual([]);
  });

  it('connects directly to an address WEBHOOK_NO_PROXY lists', async () => {
    const direct = await hookServer('127.0.0.2');
    try {
      const before = proxy.connects.length;
      const e = await register(`http://127.0.0.2:${direct.port}/direct`);
      expect(await firstAttempt(stack.api, staff, e.id)).toMatchObject({ response_status: 200, error: null });
      expect(direct.got).toEqual([{ path: '/direct', host: `127.0.0.2:${direct.port}` }]);
      expect(connectsSince(before)).toEqual([]);
    } finally {
      await direct.close();
    }
  });

  it('records a proxy refusal (407) as the attempt’s error, and the delivery is retried on the schedule', async () => {
    const hook = await hookServer();
    try {
      const e = await register(`http://127.0.0.1:${hook.port}/refused`);
      const before = proxy.connects.length;
      proxy.refuse = 407;
      let failed;
      try {
        const deliveryId = await testPing(stack.api, staff, e.id, set);
        failed = await until('the first attempt recorded, and the next one planned', async () => {
          const d = await deliveryDetail(stack.api, staff, deliveryId, set);
          return d?.attempts?.[0]?.duration_ms != null && d.next_attempt_at ? d : undefined;
        });
      } finally {
        proxy.refuse = null;
      }
      expect(failed.attempts[0]).toMatchObject({ response_status: null, error: 'proxy refused CONNECT: 407' });
      expect(connectsSince(before)).toEqual([
        { target: `127.0.0.1:${hook.port}`, authorization: PROXY_AUTHORIZATION, answered: 407 },
      ]);
      expect(hook.got).toEqual([]);
      // Like any failure: the delivery waits for its next attempt, 30 s on (spec §6.5).
      expect(failed.status).toBe('failed');
      const wait = Date.parse(failed.next_attempt_at) - Date.parse(failed.attempts[0].attempted_at);
      expect(wait).toBeGreaterThanOrEqual(30_000);
      expect(wait).toBeLessThan(32_000);
    } finally {
      await hook.close();
    }
  });
});

/** A listed name goes direct, and so do its subdomains; a literal address is not under a name. */
describe('WEBHOOK_NO_PROXY naming a host', () => {
  let stack: WebhookStack;
  let proxy: ConnectProxy;
  let staff: Actor;
  beforeAll(async () => {
    proxy = await ConnectProxy.start();
    stack = await startWebhookStack('A', { WEBHOOK_HTTP_PROXY: proxy.url(), WEBHOOK_NO_PROXY: 'LOCALHOST' });
    staff = stack.staff;
  }, 120_000);
  afterAll(async () => {
    await stopWebhookStack(stack);
    await proxy?.stop();
  });

  it('sends to localhost directly and to 127.0.0.1 through the proxy, without credentials when the URL has none', async () => {
    const hook = await hookServer();
    try {
      for (const host of ['localhost', '127.0.0.1']) {
        const res = await stack.api.post(PATHS.A.endpoints, staff.token, {
          url: `http://${host}:${hook.port}/${host}`,
          eventTypes: ['*'],
        });
        expect(res.status).toBe(201);
        expect(await firstAttempt(stack.api, staff, res.body.data.id)).toMatchObject({
          response_status: 200,
          error: null,
        });
      }
      expect(hook.got.map((g) => g.path)).toEqual(['/localhost', '/127.0.0.1']);
      expect(proxy.connects).toEqual([{ target: `127.0.0.1:${hook.port}`, authorization: undefined, answered: 200 }]);
    } finally {
      await hook.close();
    }
  });
});

/** A proxy that is not there fails each attempt with what went wrong, a token request too; nothing goes around it. */
describe('an egress proxy that cannot be reached', () => {
  let stack: WebhookStack;
  let staff: Actor;
  let proxyPort: number;
  beforeAll(async () => {
    proxyPort = await freePort(); // nothing listens there
    stack = await startWebhookStack('A', { WEBHOOK_HTTP_PROXY: `http://127.0.0.1:${proxyPort}` });
    staff = stack.staff;
  }, 120_000);
  afterAll(() => stopWebhookStack(stack));

  it('records "proxy unreachable" on the attempt, and on a token request, and the receiver gets nothing', async () => {
    const hook = await hookServer();
    try {
      const plain = await stack.api.post(PATHS.A.endpoints, staff.token, {
        url: `http://127.0.0.1:${hook.port}/plain`,
        eventTypes: ['*'],
      });
      expect(await firstAttempt(stack.api, staff, plain.body.data.id)).toMatchObject({
        response_status: null,
        error: 'proxy unreachable: ECONNREFUSED',
      });
      const oauth = await stack.api.post(PATHS.A.endpoints, staff.token, {
        url: `http://127.0.0.1:${hook.port}/oauth`,
        eventTypes: ['*'],
        authentication: {
          type: 'oauth2_client_credentials',
          tokenUrl: `http://127.0.0.1:${hook.port}/token`,
          clientId: 'tranche',
          clientSecret: 'client-secret-0123456789',
          scope: 'webhooks',
        },
      });
      expect(await firstAttempt(stack.api, staff, oauth.body.data.id)).toMatchObject({
        response_status: null,
        error: 'OAUTH2_TOKEN_FAILED: the token endpoint could not be reached (proxy unreachable: ECONNREFUSED)',
      });
      expect(hook.got).toEqual([]);
    } finally {
      await hook.close();
    }
  });
});

describe('WEBHOOK_HTTP_PROXY and WEBHOOK_NO_PROXY at the door', () => {
  const base = { NODE_ENV: 'test', DATABASE_URL: 'postgres://u:p@localhost/db' };
  const refused = (env: Record<string, string>) => {
    try {
      loadConfig({ ...base, ...env });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('accepted');
  };

  it('refuses what is not an http://host:port proxy, or a NO_PROXY entry it cannot read, with a clear error', () => {
    expect(refused({ WEBHOOK_HTTP_PROXY: 'https://proxy.internal:3128' })).toContain(
      'WEBHOOK_HTTP_PROXY: must be an http:// proxy URL',
    );
    expect(refused({ WEBHOOK_HTTP_PROXY: 'socks5://proxy.internal:1080' })).toContain('must be an http:// proxy URL');
    expect(refused({ WEBHOOK_HTTP_PROXY: 'http://proxy.internal' })).toContain('must name its port');
    expect(refused({ WEBHOOK_HTTP_PROXY: 'proxy.internal:3128' })).toContain('WEBHOOK_HTTP_PROXY');
    expect(refused({ WEBHOOK_HTTP_PROXY: 'http://proxy.internal:3128/path' })).toContain('no path, query or fragment');
    expect(refused({ WEBHOOK_NO_PROXY: 'hooks.example:443' })).toContain('WEBHOOK_NO_PROXY: hooks.example:443');
    expect(refused({ WEBHOOK_NO_PROXY: '10.0.0.0/33' })).toContain('10.0.0.0/33: not a CIDR range');
    // The password never appears in the error.
    expect(refused({ WEBHOOK_HTTP_PROXY: 'https://user:hunter22@proxy.internal:3128' })).not.toContain('hunter22');
  });

  it('reads a proxy with credentials, and prints it as host:port only', () => {
    const config = loadConfig({
      ...base,
      WEBHOOK_HTTP_PROXY: 'http://user:hunter22@proxy.internal:3128',
      WEBHOOK_NO_PROXY: '.corp.example, *.other.example, 10.0.0.0/8, *',
    });
    const proxy = config.WEBHOOK_HTTP_PROXY!;
    expect([proxy.host, proxy.port, proxy.address]).toEqual(['proxy.internal', 3128, 'proxy.internal:3128']);
    expect(proxy.authorization).toBe(`Basic ${Buffer.from('user:hunter22').toString('base64')}`);
    expect(JSON.stringify(config)).not.toContain('hunter22');
    expect(JSON.stringify(config)).not.toContain(Buffer.from('user:hunter22').toString('base64'));
    expect(JSON.stringify(config.WEBHOOK_HTTP_PROXY)).toBe('"proxy.internal:3128"');
    expect(config.WEBHOOK_NO_PROXY).toEqual([
      { kind: 'domain', name: 'corp.example' },
      { kind: 'domain', name: 'other.example' },
      { kind: 'range', address: '10.0.0.0', prefix: 8, family: 'ipv4' },
      { kind: 'all' },
    ]);
    expect(loadConfig(base).WEBHOOK_HTTP_PROXY).toBeUndefined();
  });

  it('matches WEBHOOK_NO_PROXY as no_proxy goes: a domain and what is under it, an address in a range, * for all', () => {
    const direct = noProxyMatcher(
      loadConfig({ ...base, WEBHOOK_NO_PROXY: 'Example.COM, .corp.example, 10.0.0.0/8, fd00::/8' }).WEBHOOK_NO_PROXY,
    );
    const cases: [string, string, number, boolean][] = [
      ['example.com', '93.184.215.14', 4, true],
      ['hooks.EXAMPLE.com.', '93.184.215.14', 4, true],
      ['notexample.com', '93.184.215.14', 4, false],
      ['example.com.evil.test', '93.184.215.14', 4, false],
      ['corp.example', '93.184.215.14', 4, true],
      ['a.b.corp.example', '93.184.215.14', 4, true],
      ['hooks.elsewhere.test', '10.1.2.3', 4, true],
      ['hooks.elsewhere.test', '11.1.2.3', 4, false],
      ['hooks.elsewhere.test', 'fd00::7', 6, true],
      ['hooks.elsewhere.test', '2001:db8::7', 6, false],
    ];
    expect(cases.map(([host, address, family]) => direct(host, address, family))).toEqual(cases.map((c) => c[3]));
    const all = noProxyMatcher(loadConfig({ ...base, WEBHOOK_NO_PROXY: '*' }).WEBHOOK_NO_PROXY);
    expect(all('anything.test', '93.184.215.14', 4)).toBe(true);
    const none = noProxyMatcher(loadConfig(base).WEBHOOK_NO_PROXY);
    expect(none('example.com', '10.1.2.3', 4)).toBe(false);
  });
});
