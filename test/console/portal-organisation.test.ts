import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import type { BehaviourSet } from '../../lib/behaviour-set';
import type { TestService } from '../support/service';
import type { Receiver } from '../webhooks/support/receiver';
import { failOnConsoleErrors, screenshot, seriousA11yViolations, type Browser } from './console-browser';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { PATHS, registerHook } from '../webhooks/support/hooks';
import { closePortal, openPortal } from './portal-session';

/** The integrator's portal in Chromium, each set's whole stack: the organisation's events, and nothing of another's. */
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
