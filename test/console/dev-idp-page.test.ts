import type { Page } from 'playwright-core';
import { newOrg } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { failOnConsoleErrors, openBrowser, screenshot, signIn, type Browser } from './console-browser';

type Field = { validity: { patternMismatch: boolean; valid: boolean } };

/** The development identity provider's sign-in page in Chromium, its CSP in force. */
describe('development identity provider page', () => {
  let svc: TestService;
  let browser: Browser | undefined;
  let page: Page;
  failOnConsoleErrors(() => browser);

  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { DEV_IDP_ENABLED: 'true' } });
    browser = await openBrowser();
    page = await browser.context.newPage();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('loads without a console error, and checks the organisation id with its pattern', async () => {
    await page.goto(`${svc.baseUrl}/console/`);
    await page.getByTestId('sign-in').click();
    await page.waitForURL(/\/dev-idp\/authorize\?/);
    await page.waitForLoadState('load');
    const org = page.getByLabel('Organisation id');
    await org.fill('not-a-uuid-but-exactly-36-characters');
    expect(await org.evaluate((el) => (el as unknown as Field).validity.patternMismatch)).toBe(true);
    await org.fill(newOrg());
    expect(await org.evaluate((el) => (el as unknown as Field).validity.valid)).toBe(true);
    // Pico draws the checked box with a data: image, which the page's CSP must allow.
    await page.getByLabel('admin', { exact: true }).check();
    await screenshot(page, 'dev-idp-sign-in');
  });

  it('signs in through the page to the console without a console error', async () => {
    await signIn(page, svc, { userId: 'dev-idp-page', orgId: newOrg(), roles: ['staff'] });
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Review queue');
  });
});
