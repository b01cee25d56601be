import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { PATHS } from '../webhooks/support/hooks';
import {
  failOnConsoleErrors,
  openBrowser,
  screenshot,
  seriousA11yViolations,
  signIn,
  type Browser,
} from './console-browser';

/** An endpoint's payload version in the portal (docs/decisions/0420-versioned-payloads.md), in Chromium, Set B. */
describe('the payload version in the portal', () => {
  let svc: TestService;
  let opened: Browser | undefined;
  let page: Page;
  let staff: Actor;
  failOnConsoleErrors(() => opened);
  const noViolations = async () => expect(await seriousA11yViolations(page)).toEqual([]);

  beforeAll(async () => {
    svc = await startService({ set: 'B', env: { DEV_IDP_ENABLED: 'true', WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } });
    staff = await actor(svc, newOrg(), ['staff']);
    opened = await openBrowser();
    page = await opened.context.newPage();
    await signIn(page, svc, { userId: `versions-${randomUUID().slice(0, 8)}`, orgId: staff.orgId, roles: ['staff'] });
  }, 120_000);
  afterAll(async () => {
    await opened?.close();
    await svc?.stop();
  });

  it('shows the pin on the endpoint’s page, changes it in the edit form, and lists each version in the catalog', async () => {
    const made = await http(svc.baseUrl).post(PATHS.B.endpoints, staff.token, {
      url: 'https://example.com/hooks/versions',
      eventTypes: ['subscription.approved'],
      payloadVersion: '2',
    });
    expect(made.status).toBe(201);
    const id = made.body.data.id as string;

    await page.goto(`${svc.baseUrl}/console/webhooks/${id}`);
    expect((await page.getByTestId('payload-version').textContent())?.trim()).toMatch(/^2\b/);
    await noViolations();

    await page.getByTestId('payload-version-link').click();
    await page.getByTestId('payload-version-select').selectOption('1');
    await page.getByTestId('save-endpoint').click();
    await page.waitForURL(/done=updated/);
    expect((await page.getByTestId('payload-version').textContent())?.trim()).toMatch(/^1\b/);
    const read = await http(svc.baseUrl).get(`${PATHS.B.endpoints}/${id}`, staff.token);
    expect(read.body.data.payload_version).toBe('1');

    await page.goto(`${svc.baseUrl}/console/catalog`);
    const approved = page.getByTestId('catalog-subscription.approved');
    expect(await approved.getByTestId('versions-subscription.approved').textContent()).toBe(
      'Payload versions: 1 (supported), 2 (current)',
    );
    await approved.getByText('Version 2 example', { exact: true }).click();
    expect(await approved.getByLabel('subscription.approved in payload version 2: example').textContent()).toContain(
      '"currency"',
    );
    await noViolations();

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${svc.baseUrl}/console/webhooks/${id}`);
    expect(await page.getByTestId('payload-version').isVisible()).toBe(true);
    await noViolations();
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    await screenshot(page, 'payload-version-phone');
  });
});
