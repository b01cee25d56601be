import { newOrg } from '../support/fixtures';
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
      env: { OIDC_ISSUERS: JSON.stringify([idp.config()]), EXCHANGE_RATE_LIMIT: '3', EXCHANGE_RATE_WINDOW_SECONDS: '60' },
    });
  });
  afterAll(async () => {
    await svc.stop();
    await idp.stop();
  });

  it('answers 429 RATE_LIMITED with Retry-After once a client passes the limit, failed attempts included', async () => {
    const key = await apiKeyFor(svc, newOrg());
    expect((await exchange(svc, key, await idp.sign())).status).toBe(200);
    expect((await exchange(svc, undefined, await idp.sign())).status).toBe(401);
    expect((await exchange(svc, key, await idp.sign({ expiresIn: -300 }))).status).toBe(401);
    const limited = await exchange(svc, key, await idp.sign());
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.body.error.details.retry_after_seconds).toBe(retryAfter);
  });
});
