import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import type { BehaviourSet } from '../../lib/behaviour-set';
import type { TestService } from '../support/service';
import type { Receiver } from '../webhooks/support/receiver';
import { failOnConsoleErrors, screenshot, seriousA11yViolations, type Browser } from './console-browser';
import { closePortal, hasText, openPortal, SCRIPTS } from './portal-session';

/** The integrator's portal in Chromium, each set's whole stack: an endpoint's life, register to delete. */
describe.each<BehaviourSet>(['A', 'B'])('Set %s integrator portal', (set) => {
  let svc: TestService;
  let receiver: Receiver;
  let opened: Browser | undefined;
  let page: Page;
  failOnConsoleErrors(() => opened);
  const shot = (name: string) => screenshot(page, `portal-${set.toLowerCase()}-${name}`);
  const noViolations = async () => expect(await seriousA11yViolations(page)).toEqual([]);

  beforeAll(async () => {
    ({ svc, receiver, opened, page } = await openPortal(set));
  }, 120_000);
  afterAll(() => closePortal({ opened, svc, receiver }));

  it('registers an endpoint, shows its secret once, pings it, rotates, edits, disables, re-enables and deletes it', async () => {
    const hook = `portal-${randomUUID().slice(0, 8)}`;
    // A loaded machine runs a page's deferred scripts (htmx, copy-secret.js) well after the click that
    // opened the page has returned; here they always arrive late, so each step must wait for them.
    await page.route(SCRIPTS, async (route) => {
      await new Promise((r) => setTimeout(r, 1500));
      // The page may have moved on meanwhile, and its request with it.
      await route.continue().catch(() => undefined);
    });
    await page.goto(`${svc.baseUrl}/console/webhooks`);
    await page.getByTestId('register-endpoint').click();
    await page.getByLabel('URL').fill(receiver.url(hook));
    await page.getByLabel('Description').fill('Portal test endpoint');
    await page.getByTestId('event-types').getByLabel('All event types').check();
    await noViolations();
    await page.getByTestId('save-endpoint').click();

    const secret = (await page.getByTestId('signing-secret').inputValue()).trim();
    expect(secret).toMatch(/^whsec_/);
    await page.getByTestId('copy-secret').click();
    await hasText(page, 'copy-status', 'Copied to the clipboard.');
    expect(await page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).toBe(secret);
    expect(await page.getByTestId('snippet-python').textContent()).toContain('verify_standard_webhook');
    await noViolations();
    await shot('01-secret');
    await receiver.plan(hook, { secret });

    await page.getByTestId('to-endpoint').click();
    // The ping is sent by htmx: until the page's scripts have run, the click would post the plain form
    // and land on the ping's own page (the flaky rotate click). Wait for them, not for a time.
    await page.waitForLoadState('load');
    expect(await page.content()).not.toContain(secret);
    const endpointUrl = page.url();
    await page.getByTestId('send-ping').click();
    // The block polls itself (htmx) until the delivery has an outcome.
    await hasText(page, 'ping-status', 'success');
    expect(await page.getByTestId('ping-response').textContent()).toBe('200');
    const [ping] = await receiver.waitFor(hook, 1);
    expect(ping!.verified).toBe(true);
    await noViolations();
    await shot('02-ping');

    await page.getByTestId('rotate-open').click();
    await page.getByTestId('rotate').click();
    const rotated = await page.getByTestId('signing-secret').inputValue();
    expect(rotated).not.toBe(secret);
    expect(await page.getByTestId('overlap').textContent()).toContain('keeps signing for 24 hours');
    await noViolations();
    await shot('03-rotated');

    await page.goto(endpointUrl);
    await page.getByTestId('edit').click();
    await page.getByLabel('Description').fill('Portal test endpoint, limited');
    await page.getByLabel(/Deliveries per second at most/).fill('5');
    await noViolations();
    await page.getByTestId('save-endpoint').click();
    await hasText(page, 'notice', 'Endpoint saved.');
    expect(await page.getByTestId('settings').textContent()).toContain('32 at once, 5/s');

    await page.getByTestId('disable').click();
    await hasText(page, 'endpoint-status', 'disabled');
    expect(await page.getByTestId('send-ping').count()).toBe(0);
    await noViolations();
    await shot('04-disabled');
    await page.getByTestId('enable').click();
    await hasText(page, 'endpoint-status', /^\s*enabled/);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${svc.baseUrl}/console/webhooks`);
    await noViolations();
    // Nothing but the table's own scroll box is wider than the phone.
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    await shot('05-list-phone');
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(endpointUrl);
    await page.getByTestId('delete').click();
    await noViolations();
    await page.getByTestId('confirm-delete').click();
    await hasText(page, 'notice', 'Endpoint deleted.');
    expect(await page.getByTestId('endpoints').count()).toBe(0);
    await shot('06-deleted');
    await page.unroute(SCRIPTS);
  });
});
