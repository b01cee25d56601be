import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { failOnConsoleErrors, openBrowser, seriousA11yViolations, signIn, type Browser } from './console-browser';

/**
 * Transport authentication (docs/decisions/0319-authenticated-receivers.md) in the console: an endpoint's
 * page shows how it authenticates at the transport (never the secret), and its authentication page sets
 * OAuth2 client credentials or removes them through the API's PATCH; a refusal is shown with the API's
 * message.
 */
describe('Console: endpoint authentication', () => {
  let svc: TestService;
  let opened: Browser | undefined;
  let page: Page;
  failOnConsoleErrors(() => opened);
  const org = newOrg();
  const secret = `console-client-secret-${randomUUID()}`;

  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { DEV_IDP_ENABLED: 'true' } });
    opened = await openBrowser();
    page = await opened.context.newPage();
    await signIn(page, svc, { userId: `auth-staff-${randomUUID().slice(0, 8)}`, orgId: org, roles: ['staff'] });
  }, 120_000);
  afterAll(async () => {
    await opened?.close();
    await svc?.stop();
  });

  it('sets OAuth2 client credentials, shows them without the secret, refuses a bad token URL and removes them', async () => {
    const staff = await actor(svc, org, ['staff']);
    const made = await http(svc.baseUrl).post('/notifications/webhook-endpoints', staff.token, {
      url: 'https://hooks.example.com/console-auth',
      eventTypes: ['*'],
    });
    expect(made.status).toBe(201);
    const id: string = made.body.data.id;

    await page.goto(`${svc.baseUrl}/console/webhooks/${id}`);
    expect(await page.getByTestId('authentication-type').textContent()).toBe('Signature only');
    await page.getByTestId('authentication-link').click();
    await page.waitForURL(`${svc.config.PUBLIC_BASE_URL}/console/webhooks/${id}/authentication`);
    expect(await seriousA11yViolations(page)).toEqual([]);

    // A token URL that is not https: the API's refusal, on the form again.
    await page.getByLabel('Type').selectOption('oauth2_client_credentials');
    await page.getByLabel('Token URL').fill('http://auth.example.com/token');
    await page.getByLabel('Client id').fill('console-client');
    await page.getByLabel('Client secret').fill(secret);
    await page.getByTestId('save-authentication').click();
    expect(await page.getByTestId('refusal').textContent()).toContain('tokenUrl: the URL must use https');
    expect(await page.content()).not.toContain(secret);

    await page.getByLabel('Token URL').fill('https://93.184.215.14/oauth2/token');
    await page.getByLabel('Client secret').fill(secret);
    await page.getByLabel(/^Scope/).fill('webhooks:write');
    await page.getByTestId('save-authentication').click();
    await page.waitForURL(`${svc.config.PUBLIC_BASE_URL}/console/webhooks/${id}?done=authentication`);
    const facts = await page.getByTestId('authentication').textContent();
    expect(facts).toContain('OAuth2 client credentials');
    expect(facts).toContain('console-client');
    expect(facts).toContain('https://93.184.215.14/oauth2/token');
    expect(facts).toContain('webhooks:write');
    expect(await page.content()).not.toContain(secret);
    const read = await http(svc.baseUrl).get(`/notifications/webhook-endpoints/${id}`, staff.token);
    expect(read.body.data.authentication).toEqual({
      type: 'oauth2_client_credentials',
      token_url: 'https://93.184.215.14/oauth2/token',
      client_id: 'console-client',
      scope: 'webhooks:write',
    });

    await page.goto(`${svc.baseUrl}/console/webhooks/${id}/authentication`);
    expect(await page.getByLabel('Client id').inputValue()).toBe('console-client');
    expect(await page.getByLabel('Client secret').inputValue()).toBe('');
    await page.getByLabel('Type').selectOption('none');
    await page.getByTestId('save-authentication').click();
    await page.waitForURL(`${svc.config.PUBLIC_BASE_URL}/console/webhooks/${id}?done=authentication`);
    expect(await page.getByTestId('authentication-type').textContent()).toBe('Signature only');
  });
});
