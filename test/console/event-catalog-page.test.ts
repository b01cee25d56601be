import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { registerHook } from '../webhooks/support/hooks';
import { Receiver } from '../webhooks/support/receiver';
import {
  failOnConsoleErrors,
  openBrowser,
  screenshot,
  seriousA11yViolations,
  signIn,
  type Browser,
} from './console-browser';

/** The event catalog in the portal (docs/decisions/0397-event-catalog.md), in Chromium, Set B. */
describe('the event catalog page', () => {
  let svc: TestService;
  let receiver: Receiver;
  let opened: Browser | undefined;
  let page: Page;
  let staff: Actor;
  failOnConsoleErrors(() => opened);
  const noViolations = async () => expect(await seriousA11yViolations(page)).toEqual([]);

  beforeAll(async () => {
    [svc, receiver] = await Promise.all([
      startService({ set: 'B', env: { DEV_IDP_ENABLED: 'true', WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } }),
      Receiver.start(),
    ]);
    staff = await actor(svc, newOrg(), ['staff']);
    opened = await openBrowser();
    page = await opened.context.newPage();
    await signIn(page, svc, { userId: `catalog-${randomUUID().slice(0, 8)}`, orgId: staff.orgId, roles: ['staff'] });
  }, 120_000);
  afterAll(async () => {
    await opened?.close();
    await svc?.stop();
    await receiver?.stop();
  });

  it('shows each type with who gets it, and sends its example to an endpoint', async () => {
    const hook = `catalog-page-${randomUUID().slice(0, 8)}`;
    await registerHook(svc, receiver, staff, hook, ['subscription.approved']);

    await page.goto(`${svc.baseUrl}/console/catalog`);
    const approved = page.getByTestId('catalog-subscription.approved');
    expect(await approved.textContent()).toContain(hook);
    expect(await page.getByTestId('catalog-shares.issued').getByTestId('no-subscribers').count()).toBe(1);
    await approved.getByText('Example', { exact: true }).click();
    expect(await approved.getByLabel('Example of subscription.approved').textContent()).toContain(
      '"event_type": "subscription.approved"',
    );
    await noViolations();
    await screenshot(page, 'catalog-01');

    await page.getByTestId('send-example-shares.issued').click();
    await page.waitForURL(/\/pings\//);
    const [arrived] = await receiver.waitFor(hook, 1);
    expect(JSON.parse(arrived!.body).event_type).toBe('shares.issued');
    expect(arrived!.verified).toBe(true);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${svc.baseUrl}/console/catalog`);
    await noViolations();
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    await screenshot(page, 'catalog-02-phone');
  });
});
