import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { until } from '../support/wait';
import { failOnConsoleErrors, openBrowser, seriousA11yViolations, signIn, type Browser } from './console-browser';

/**
 * An endpoint's static headers in the console (docs/decisions/0400-custom-headers-per-endpoint.md): the
 * endpoint's page shows them, a secret one masked; its headers page sets them through the API's PATCH (a
 * secret left empty keeps its value, a cleared name removes its header), shows a refusal with the API's
 * message naming the header, and never puts a secret value in a page.
 */
describe('Console: endpoint headers', () => {
  let svc: TestService;
  let opened: Browser | undefined;
  let page: Page;
  let staff: Actor;
  failOnConsoleErrors(() => opened);
  const org = newOrg();
  const secret = `console-gateway-key-${randomUUID()}`;

  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { DEV_IDP_ENABLED: 'true', WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } });
    opened = await openBrowser();
    page = await opened.context.newPage();
    await signIn(page, svc, { userId: `hdr-staff-${randomUUID().slice(0, 8)}`, orgId: org, roles: ['staff'] });
    staff = await actor(svc, org, ['staff']);
  }, 120_000);
  afterAll(async () => {
    await opened?.close();
    await svc?.stop();
  });

  it('shows the headers masked, sets, keeps and removes them, and refuses a bad one by name', async () => {
    const api = http(svc.baseUrl);
    const made = await api.post('/notifications/webhook-endpoints', staff.token, {
      url: 'https://hooks.example.com/console-headers',
      eventTypes: ['*'],
      headers: { 'X-Api-Key': { value: secret, secret: true } },
    });
    expect(made.status).toBe(201);
    const id: string = made.body.data.id;
    const read = async () => (await api.get(`/notifications/webhook-endpoints/${id}`, staff.token)).body.data.headers;

    await page.goto(`${svc.baseUrl}/console/webhooks/${id}`);
    expect(await page.getByTestId('headers').textContent()).toContain('X-Api-Key: ••••••');
    expect(await page.content()).not.toContain(secret);
    await page.getByTestId('headers-link').click();
    await page.waitForURL(`${svc.config.PUBLIC_BASE_URL}/console/webhooks/${id}/headers`);
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(
      await page
        .getByLabel(/^Value/)
        .first()
        .inputValue(),
    ).toBe('');

    // A header the service sets: the API's refusal, naming it, on the form again; no secret in the page.
    await page.locator('#header-name-1').fill('Content-Type');
    await page.locator('#header-value-1').fill('text/plain');
    await page.getByTestId('save-headers').click();
    expect(await page.getByTestId('refusal').textContent()).toContain('header Content-Type: may not be given');
    expect(await page.content()).not.toContain(secret);
    expect(await read()).toEqual({ 'X-Api-Key': { value: null, secret: true } });

    // The secret row left empty keeps its value; a plain header is added.
    await page.locator('#header-name-1').fill('X-Team');
    await page.locator('#header-value-1').fill('ops desk');
    await page.getByTestId('save-headers').click();
    await page.waitForURL(`${svc.config.PUBLIC_BASE_URL}/console/webhooks/${id}/headers?done=saved`);
    expect(await read()).toEqual({
      'X-Api-Key': { value: null, secret: true },
      'X-Team': { value: 'ops desk', secret: false },
    });
    const sealed = await svc.orm.em
      .getConnection()
      .execute<{ s: string }[]>('select headers_secret_ciphertext as s from webhook_endpoints where id = ?', [id]);
    expect(sealed[0]!.s).toEqual(expect.any(String));
    expect(await page.content()).not.toContain(secret);

    // At phone width nothing is wider than the phone.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1440, height: 900 });

    // Clearing a name removes its header.
    await page.locator('#header-name-0').fill('');
    await page.getByTestId('save-headers').click();
    await page.waitForURL(`${svc.config.PUBLIC_BASE_URL}/console/webhooks/${id}/headers?done=saved`);
    expect(await read()).toEqual({ 'X-Team': { value: 'ops desk', secret: false } });
    await page.goto(`${svc.baseUrl}/console/webhooks/${id}`);
    expect(await page.getByTestId('headers').textContent()).toContain('X-Team: ops desk');
  });

  it("shows a delivery's attempt headers with the secret value masked", async () => {
    const api = http(svc.baseUrl);
    // Nothing listens on port 9: the attempt fails at connect, and its headers as sent are kept.
    const made = await api.post('/notifications/webhook-endpoints', staff.token, {
      url: 'http://127.0.0.1:9/console-headers',
      eventTypes: ['*'],
      headers: { 'X-Api-Key': { value: secret, secret: true }, 'X-Team': { value: 'ops' } },
    });
    expect(made.status).toBe(201);
    const ping = await api.post(`/notifications/webhook-endpoints/${made.body.data.id}/test`, staff.token);
    expect(ping.status).toBe(202);
    const deliveryId: string = ping.body.data.delivery_id;
    await until('the attempt recorded', async () => {
      const d = await api.get(`/notifications/webhook-deliveries/${deliveryId}`, staff.token);
      return d.body.data?.attempts?.[0]?.request_headers;
    });
    await page.goto(`${svc.baseUrl}/console/deliveries/${deliveryId}`);
    const shown = await page.getByTestId('request-headers').first().textContent();
    expect(shown).toContain('X-Api-Key: [redacted]');
    expect(shown).toContain('X-Team: ops');
    expect(await page.content()).not.toContain(secret);
    expect(await seriousA11yViolations(page)).toEqual([]);
  });
});
