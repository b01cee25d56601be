import { randomUUID } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';
import {
  failOnConsoleErrors,
  openBrowser,
  screenshot,
  seriousA11yViolations,
  signIn,
  type Browser,
} from './console-browser';
import { createOffering, createSubscription } from '../support/fixtures';

/**
 * The console shows an information request beside its answer in the review queue, marks one still
 * unanswered (docs/decisions/0277-answering-an-information-request.md), and lists each offering's
 * committed and remaining amounts (docs/decisions/0278-offering-capacity-reservations.md), and what holds an
 * offering before review, where staff cancel with a reason (docs/decisions/0369-staff-cancel-before-review.md).
 */
describe('Set A operator console: information requests and offering capacity', () => {
  let svc: TestService;
  let w: LifecycleWorld;
  let browser: BrowserContext;
  let closeBrowser: () => Promise<void>;
  let opened: Browser | undefined;
  failOnConsoleErrors(() => opened);
  let page: Page;

  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { DEV_IDP_ENABLED: 'true' } });
    w = await lifecycleWorld(svc);
    opened = await openBrowser();
    ({ context: browser, close: closeBrowser } = opened);
    page = await browser.newPage();
    await signIn(page, svc, { userId: `console-staff-${randomUUID().slice(0, 8)}`, orgId: w.org, roles: ['staff'] });
  }, 120_000);
  afterAll(async () => {
    await closeBrowser?.();
    await svc?.stop();
  });

  it('marks an unanswered request in the queue, then shows the answer beside what was asked', async () => {
    const s = await w.inReviewByWire();
    expect((await w.post(s.id, 'request-info', w.staff, { reason: 'Proof of funds' })).status).toBe(200);
    await page.goto(`${svc.baseUrl}/console/`);
    const card = page.getByTestId(`queue-card-${s.id}`);
    expect(await card.getByTestId('info-unanswered').count()).toBe(1);
    expect(await card.getByTestId('info-request').textContent()).toContain('Proof of funds');
    expect(await card.getByTestId('info-answer').count()).toBe(0);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'a-info-01-asked');

    const answered = await w.post(s.id, 'provide-info', w.investor, {
      message: 'Bank statement for March',
      documentReferences: ['stmt-2026-03'],
    });
    expect(answered.status).toBe(200);
    await page.goto(`${svc.baseUrl}/console/`);
    expect(await card.getByTestId('info-unanswered').count()).toBe(0);
    const answer = await card.getByTestId('info-answer').textContent();
    expect(answer).toContain('Bank statement for March');
    expect(await card.getByTestId('info-request').textContent()).toContain('stmt-2026-03');
    await screenshot(page, 'a-info-02-answered');

    await page.goto(`${svc.baseUrl}/console/subscriptions/${s.id}`);
    expect(await page.getByTestId('info-answer').textContent()).toContain('Bank statement for March');
  });

  it("lists each offering's maximum, committed and remaining amounts", async () => {
    const offering = await createOffering(w.api, w.staff.token, {
      offering: { name: 'Capped seed', maxAmount: '1000.00' },
      securityClass: { name: 'Common', pricePerUnit: '100.00' },
    });
    const id = offering.offeringId;
    const created = await createSubscription(w.api, w.investor.token, offering, { unitsSubscribed: 3 });
    expect(created.status).toBe(201);
    await page.goto(`${svc.baseUrl}/console/offerings`);
    const row = page.getByTestId(`offering-${id}`);
    expect(await row.getByTestId('committed').textContent()).toBe('300.00 USD');
    expect(await row.getByTestId('remaining').textContent()).toBe('700.00 USD');
    expect(await row.textContent()).toContain('1000.00 USD');
    // The lifecycle world's offering has no maximum.
    expect(
      await page.getByTestId(`offering-${w.offering.offeringId}`).getByTestId('remaining').textContent(),
    ).toContain('unbounded');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'a-offerings');
  });

  it('lists what holds an offering before review, and staff cancel a draft there with a reason', async () => {
    const offering = await createOffering(w.api, w.staff.token, {
      offering: { name: 'Held seed', maxAmount: '500.00', maxPerInvestor: '400.00' },
      securityClass: { name: 'Common', pricePerUnit: '100.00' },
    });
    const draft = (await createSubscription(w.api, w.investor.token, offering, { unitsSubscribed: 4 })).body.data;
    await page.goto(`${svc.baseUrl}/console/offerings`);
    const row = page.getByTestId(`offering-${offering.offeringId}`);
    expect(await row.textContent()).toContain('400.00 USD');
    await row.getByTestId('holds-link').click();
    const held = page.getByTestId(`hold-${draft.id}`);
    await held.waitFor();
    expect(await held.textContent()).toContain('draft');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'a-offering-holds');

    await held.getByRole('link').click();
    expect(await page.getByTestId('expires-at').count()).toBe(1);
    await page.getByTestId(`cancel-open-${draft.id}`).click();
    await page.getByLabel('Reason for cancelling (the investor is told)').fill('Left unsigned after the call');
    await page.getByTestId(`cancel-submit-${draft.id}`).click();
    await page.getByTestId('notice').waitFor();
    expect(await page.getByTestId('notice').textContent()).toContain('Cancelled.');
    const now = (await w.api.get(`/issuance/subscriptions/${draft.id}`, w.staff.token)).body.data;
    expect(now).toMatchObject({ status: 'cancelled', status_reason: 'Left unsigned after the call' });
    const read = (await w.api.get(`/issuance/offerings/${offering.offeringId}`, w.staff.token)).body.data;
    expect(read.committed_amount).toBe('0.00');
    await page.goto(`${svc.baseUrl}/console/offerings/${offering.offeringId}/holds`);
    expect(await page.getByTestId('holds-empty').count()).toBe(1);
  });
});
