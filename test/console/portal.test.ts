import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import type { BehaviourSet } from '../../lib/behaviour-set';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { http } from '../support/http';
import { failedDeliveries } from '../webhooks/support/failed-deliveries';
import { PATHS, registerHook } from '../webhooks/support/hooks';
import { Receiver } from '../webhooks/support/receiver';
import { until } from '../support/wait';
import {
  failOnConsoleErrors,
  openBrowser,
  screenshot,
  seriousA11yViolations,
  signIn,
  type Browser,
} from './console-browser';

/** The console as the integrator's portal, in Chromium against each set's whole stack. */
describe.each<BehaviourSet>(['A', 'B'])('Set %s integrator portal', (set) => {
  let svc: TestService;
  let receiver: Receiver;
  let opened: Browser | undefined;
  let page: Page;
  let staff: Actor;
  failOnConsoleErrors(() => opened);
  const shot = (name: string) => screenshot(page, `portal-${set.toLowerCase()}-${name}`);
  const noViolations = async () => expect(await seriousA11yViolations(page)).toEqual([]);

  beforeAll(async () => {
    [svc, receiver] = await Promise.all([
      startService({ set, env: { DEV_IDP_ENABLED: 'true', WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } }),
      Receiver.start(),
    ]);
    staff = await actor(svc, newOrg(), ['staff']);
    opened = await openBrowser();
    await opened.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.baseUrl });
    page = await opened.context.newPage();
    await signIn(page, svc, { userId: `portal-${randomUUID().slice(0, 8)}`, orgId: staff.orgId, roles: ['staff'] });
  }, 120_000);
  afterAll(async () => {
    await opened?.close();
    await svc?.stop();
    await receiver?.stop();
  });

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

  it('finds a failing delivery by its filters, pages through them, shows every attempt and the signed body, and retries it', async () => {
    const api = http(svc.baseUrl);
    const paths = PATHS[set];
    const hook = `failing-${randomUUID().slice(0, 8)}`;
    // Each ping's first attempt is answered 500, later ones 200.
    const endpoint = await registerHook(svc, receiver, staff, hook, ['*'], { responses: [500, 500] });
    const ping = async () =>
      (await api.post(`${paths.endpoints}/${endpoint.id}/test`, staff.token)).body.data.delivery_id as string;
    const [older, newer] = [await ping(), await ping()];
    const status = async (id: string) => (await api.get(`${paths.deliveries}/${id}`, staff.token)).body.data.status;
    await until('both failed', async () =>
      (await status(older)) === 'failed' && (await status(newer)) === 'failed' ? true : undefined,
    );

    const hour = (offset: number) => new Date(Date.now() + offset * 3600_000).toISOString().slice(0, 16);
    await page.goto(`${svc.baseUrl}/console/deliveries`);
    await page.getByLabel('Endpoint').selectOption(endpoint.id);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByLabel('Event type').selectOption('test.ping');
    await page.getByLabel('Created before (UTC)').fill(hour(-1));
    await page.getByTestId('apply-filters').click();
    await page.getByTestId('no-deliveries').waitFor();
    await page.getByLabel('Created before (UTC)').fill(hour(1));
    await page.getByLabel('Created from (UTC)').fill(hour(-1));
    await page.getByTestId('apply-filters').click();
    await page.getByTestId(`delivery-${newer}`).waitFor();
    expect(await page.getByTestId(`delivery-${older}`).count()).toBe(1);
    await noViolations();
    await shot('07-explorer');

    // One a page: the cursor carries on with the same filters.
    await page.goto(`${page.url()}&limit=1`);
    expect(await page.getByTestId('deliveries').locator('tbody tr').count()).toBe(1);
    await page.getByTestId(`delivery-${newer}`).waitFor();
    await page.getByTestId('older-deliveries').click();
    await page.getByTestId(`delivery-${older}`).waitFor();
    expect(await page.getByLabel('Status').inputValue()).toBe('failed');

    await page.getByTestId(`delivery-${older}`).getByRole('link').click();
    await page.waitForURL(`${svc.baseUrl}/console/deliveries/${older}`);
    expect(await page.getByTestId('attempt-response').allTextContents()).toEqual(['500']);
    // The exact bytes the endpoint got.
    const sent = (await receiver.waitFor(hook, 2)).find((r) => r.headers['webhook-id'] === older);
    expect(await page.getByTestId('signed-body').textContent()).toBe(sent!.body);
    // And the exact headers, signatures included, as the attempt sent them.
    const headersOf = (n: number) =>
      page.getByTestId(`attempt-headers-${n}`).getByTestId('request-headers').textContent();
    for (const name of ['X-Service-Signature', 'X-Service-Timestamp', 'webhook-timestamp', 'webhook-signature'])
      expect(await headersOf(1)).toContain(`${name}: ${sent!.headers[name.toLowerCase()]}`);
    expect(await page.content()).not.toContain(endpoint.secret.slice(6));
    expect(await page.getByTestId('next-attempt').textContent()).toMatch(/UTC/);
    expect(await page.getByTestId('delivery-workflow-link').getAttribute('href')).toBe(
      `${svc.config.TEMPORAL_UI_URL}/namespaces/default/workflows/webhook-delivery-${older}`,
    );
    await noViolations();
    await shot('08-delivery');

    await page.getByTestId('retry-delivery').click();
    await hasText(page, 'notice', 'Retry accepted');
    await until('retried', async () => ((await status(older)) === 'success' ? true : undefined));
    await page.reload();
    await hasText(page, 'delivery-status', 'success');
    expect(await page.getByTestId('attempt-response').allTextContents()).toEqual(['500', '200']);
    const retry = (await receiver.waitFor(hook, 3)).filter((r) => r.headers['webhook-id'] === older)[1]!;
    expect(await headersOf(2)).toContain(`webhook-signature: ${retry.headers['webhook-signature']}`);
    await noViolations();
    await shot('09-retried');
  });

  it('recovers an endpoint’s failed deliveries with a live progress bar, and cancels a long recovery', async () => {
    const knex = svc.orm.em.getConnection().getKnex();
    const localTime = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().slice(0, 16);
    const start = async (endpointId: string, until?: string, missing = false) => {
      await page.goto(`${svc.baseUrl}/console/webhooks/${endpointId}`);
      await page.getByTestId('recovery-open').click();
      if (missing) await page.getByLabel('Also deliver the events it never received').check();
      await page.getByLabel('Created from (UTC)').fill(localTime(3 * 3600_000));
      if (until) await page.getByLabel('Until (UTC, optional)').fill(until);
      await page.getByTestId('start-recovery').click();
      await page.getByTestId('recovery').waitFor();
    };

    const hook = `recover-${randomUUID().slice(0, 8)}`;
    const endpoint = await registerHook(svc, receiver, staff, hook, ['*']);
    // An end before the start is refused, and the page says which field and why.
    await page.goto(`${svc.baseUrl}/console/webhooks/${endpoint.id}`);
    await page.getByTestId('recovery-open').click();
    await page.getByLabel('Created from (UTC)').fill(localTime(3600_000));
    await page.getByLabel('Until (UTC, optional)').fill(localTime(2 * 3600_000));
    await page.getByTestId('start-recovery').click();
    await hasText(page, 'refusal', /until: until must be after since.*VALIDATION_FAILED/);
    await noViolations();
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    await failedDeliveries(knex, { orgId: staff.orgId, endpointId: endpoint.id }, [
      { createdAt: twoHoursAgo, status: 'exhausted' },
      { createdAt: twoHoursAgo, status: 'exhausted' },
      { createdAt: twoHoursAgo, status: 'failed' },
      // After the recovery's end: not part of it.
      { createdAt: new Date(Date.now() - 30 * 60_000), status: 'exhausted' },
    ]);
    const anHourAgo = localTime(3600_000);
    await start(endpoint.id, anHourAgo);
    expect(await page.locator('hgroup').textContent()).toContain(`to ${anHourAgo.replace('T', ' ')}:00 UTC`);
    await noViolations();
    // The block updates itself (htmx) until the recovery has finished.
    await hasText(page, 'recovery-status', 'completed');
    expect(await page.getByTestId('recovery-figures').textContent()).toContain(
      '3 of 3 processed: 3 retried, 0 skipped',
    );
    expect(await page.locator('progress').getAttribute('value')).toBe('3');
    await receiver.waitFor(hook, 3);
    await noViolations();
    await shot('10-recovered');
    // Replay missing, chosen on the same form: the page says what it sends.
    await start(endpoint.id, undefined, true);
    expect(await page.locator('hgroup').textContent()).toContain('Events never received, then failed');
    await hasText(page, 'recovery-status', 'completed');
    await noViolations();

    const slow = `recover-long-${randomUUID().slice(0, 8)}`;
    const long = await registerHook(svc, receiver, staff, slow, ['*']);
    await failedDeliveries(
      knex,
      { orgId: staff.orgId, endpointId: long.id },
      Array.from({ length: 500 }, () => ({ createdAt: twoHoursAgo, status: 'exhausted' as const })),
    );
    await start(long.id);
    await page.getByTestId('cancel-recovery').click();
    await hasText(page, 'notice', 'Cancelling');
    await hasText(page, 'recovery-status', 'cancelled');
    const figures = await page.getByTestId('recovery-figures').textContent();
    expect(Number(/^(\d+) of 500/.exec(figures!)?.[1])).toBeLessThan(500);
    await noViolations();
    await shot('11-recovery-cancelled');

    // The endpoint's recoveries, newest first, each with its bar; a running one is cancelled from its row.
    await failedDeliveries(
      knex,
      { orgId: staff.orgId, endpointId: long.id },
      Array.from({ length: 500 }, () => ({ createdAt: twoHoursAgo, status: 'exhausted' as const })),
    );
    const again = await http(svc.baseUrl).post(`${PATHS[set].endpoints}/${long.id}/recoveries`, staff.token, {
      since: new Date(Date.now() - 3 * 3600_000).toISOString(),
    });
    expect(again.status).toBe(202);
    await page.goto(`${svc.baseUrl}/console/webhooks/${long.id}`);
    await page.getByTestId('recoveries-link').click();
    const row = page.getByTestId(`recovery-${again.body.data.id}`);
    await row.waitFor();
    expect(await page.getByTestId('recoveries').locator('tbody tr').count()).toBe(2);
    expect(await page.getByTestId('recoveries').locator('progress').count()).toBe(2);
    await noViolations();
    // The table swaps itself every second; the row's Cancel form is the same element across swaps,
    // so a click that spans one reaches it (a new button would lose the mouse-up).
    const cancel = row.getByTestId('list-cancel');
    await cancel.evaluate((b) => ((b as unknown as { kept?: boolean }).kept = true));
    const polled = () =>
      page.waitForResponse((r) => r.url().includes('/recoveries') && r.request().headers()['x-console-poll'] === '1');
    await polled();
    await polled(); // the first poll's swap is done before the next request goes out
    expect(await cancel.evaluate((b) => (b as unknown as { kept?: boolean }).kept === true)).toBe(true);
    await cancel.click();
    await hasText(page, 'notice', 'Cancelling');
    // The table updates itself (htmx) until the recovery has stopped.
    await row.getByTestId('list-status').filter({ hasText: 'cancelled' }).waitFor();
    expect(await row.getByTestId('list-cancel').count()).toBe(0);
    await noViolations();
    await shot('11b-recoveries');
  });

  it('lists the organisation’s events by type and shows where each one went', async () => {
    const api = http(svc.baseUrl);
    const hook = `events-${randomUUID().slice(0, 8)}`;
    const endpoint = await registerHook(svc, receiver, staff, hook, ['*']);
    const sent = (await api.post(`${PATHS[set].endpoints}/${endpoint.id}/test`, staff.token)).body.data;
    await receiver.waitFor(hook, 1);

    await page.goto(`${svc.baseUrl}/console/events`);
    await page.getByLabel('Event type').selectOption('test.ping');
    await page.getByTestId('apply-event-filter').click();
    const row = page.getByTestId(`event-${sent.event_id}`);
    await row.waitFor();
    await noViolations();
    await shot('12-events');
    await row.getByTestId('event-deliveries').click();
    await page.getByTestId(`delivery-${sent.delivery_id}`).waitFor();
    expect(await page.getByTestId('deliveries').locator('tbody tr').count()).toBe(1);
    expect(await page.getByTestId(`delivery-${sent.delivery_id}`).textContent()).toContain(receiver.url(hook));
    await noViolations();
    await shot('13-event-deliveries');
  });

  it('shows and changes nothing of another organisation’s endpoints, deliveries or events', async () => {
    const api = http(svc.baseUrl);
    const other = await actor(svc, newOrg(), ['staff']);
    const hook = `foreign-${randomUUID().slice(0, 8)}`;
    const foreign = await registerHook(svc, receiver, other, hook, ['*']);
    const sent = (await api.post(`${PATHS[set].endpoints}/${foreign.id}/test`, other.token)).body.data;
    await receiver.waitFor(hook, 1);

    for (const path of [
      `/console/webhooks/${foreign.id}`,
      `/console/webhooks/${foreign.id}/edit`,
      `/console/deliveries/${sent.delivery_id}`,
    ]) {
      const res = await page.goto(`${svc.baseUrl}${path}`);
      expect([path, res!.status()]).toEqual([path, 404]);
      expect(await page.content()).not.toContain(receiver.url(hook));
    }
    await page.goto(`${svc.baseUrl}/console/deliveries?event_id=${sent.event_id}`);
    await page.getByTestId('no-deliveries').waitFor();
    await page.goto(`${svc.baseUrl}/console/webhooks`);
    expect(await page.content()).not.toContain(receiver.url(hook));
    await page.goto(`${svc.baseUrl}/console/events`);
    expect(await page.getByTestId(`event-${sent.event_id}`).count()).toBe(0);
    // A delete sent from the console's own origin, for the other organisation's endpoint.
    const status = await page.evaluate(
      (url) => fetch(url, { method: 'POST' }).then((r) => r.status),
      `${svc.baseUrl}/console/webhooks/${foreign.id}/delete`,
    );
    expect(status).toBe(404);
    // That 404 is the one error the browser logged, and the one this test expects.
    expect(opened!.takeConsoleErrors()).toEqual([expect.stringContaining('/delete: Failed to load resource')]);
    expect((await api.get(`${PATHS[set].endpoints}/${foreign.id}`, other.token)).status).toBe(200);
    await shot('14-other-organisation');
  });
});

const SCRIPTS = '**/console/assets/*.js';

/** Waits until the element with the test id holds the text. */
async function hasText(page: Page, testId: string, text: string | RegExp): Promise<void> {
  await page.getByTestId(testId).filter({ hasText: text }).first().waitFor({ timeout: 30_000 });
}
