import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import type { BehaviourSet } from '../../lib/behaviour-set';
import type { TestService } from '../support/service';
import type { Receiver } from '../webhooks/support/receiver';
import { failOnConsoleErrors, screenshot, seriousA11yViolations, type Browser } from './console-browser';
import type { Actor } from '../support/fixtures';
import { http } from '../support/http';
import { failedDeliveries } from '../webhooks/support/failed-deliveries';
import { PATHS, registerHook } from '../webhooks/support/hooks';
import { until } from '../support/wait';
import { closePortal, hasText, openPortal } from './portal-session';

/** The integrator's portal in Chromium, each set's whole stack: failed deliveries found, retried and recovered. */
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
    ({ svc, receiver, staff, opened, page } = await openPortal(set));
  }, 120_000);
  afterAll(() => closePortal({ opened, svc, receiver }));

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
});
