import { newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { apiKeyFor, exchange } from './support/identity';
import { TestIssuer } from './support/test-issuer';

describe('token exchange rate limit', () => {
  let svc: TestService;
  let idp: TestIssuer;

  beforeAll(async () => {
    idp = await TestIssuer.start();
    svc = await startService({
      set: 'A',
      env: {
        OIDC_ISSUERS: JSON.stringify([idp.config()]),
        EXCHANGE_RATE_LIMIT_PER_KEY: '3',
        EXCHANGE_RATE_LIMIT_PER_ADDRESS: '5',
        EXCHANGE_RATE_WINDOW_SECONDS: '60',
        // Each test below speaks for a client address of its own, through a trusted proxy.
        TRUST_PROXY: 'true',
      },
    });
  });
  afterAll(async () => {
    await svc.stop();
    await idp.stop();
  });

  const from = (address: string) => ({ 'x-forwarded-for': address });
  const exchangeFrom = async (address: string, key: string | undefined) =>
    http(svc.baseUrl).post(
      '/identity/auth/exchange',
      undefined,
      { token: await idp.sign() },
      { ...from(address), ...(key ? { 'x-api-key': key } : {}) },
    );

  it('answers 429 RATE_LIMITED with Retry-After once a key passes its limit, failed attempts included', async () => {
    const key = await apiKeyFor(svc, newOrg());
    expect((await exchangeFrom('198.51.100.1', key)).status).toBe(200);
    expect((await exchangeFrom('198.51.100.1', undefined)).status).toBe(401);
    const expired = await http(svc.baseUrl).post(
      '/identity/auth/exchange',
      undefined,
      { token: await idp.sign({ expiresIn: -300 }) },
      { ...from('198.51.100.2'), 'x-api-key': key },
    );
    expect(expired.status).toBe(401);
    expect((await exchangeFrom('198.51.100.3', key)).status).toBe(200);
    // The key's fourth exchange, from yet another address: the per-key count binds.
    const limited = await exchangeFrom('198.51.100.4', key);
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.body.error.details.retry_after_seconds).toBe(retryAfter);
  });

  it('counts per client address across keys', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await exchangeFrom('198.51.100.9', await apiKeyFor(svc, newOrg()))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});

describe('token exchange limits by default', () => {
  let svc: TestService;
  let idp: TestIssuer;

  beforeAll(async () => {
    idp = await TestIssuer.start();
    svc = await startService({ set: 'A', env: { OIDC_ISSUERS: JSON.stringify([idp.config()]) } });
  });
  afterAll(async () => {
    await svc.stop();
    await idp.stop();
  });

  it('lets one backend exchange tokens for many users with one key from one address', async () => {
    const key = await apiKeyFor(svc, newOrg());
    const statuses = new Map<number, number>();
    // Well past the old 30 a minute; a real integration logging in a burst of users.
    for (let i = 0; i < 60; i++) {
      const status = (await exchange(svc, key, await idp.sign())).status;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 200: 60 });
  });
});
