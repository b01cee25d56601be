import { randomUUID } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import { actor } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { reaches, signedSubscription, subscription, world, type World } from '../payments/payment-helpers';
import { Receiver } from '../webhooks/support/receiver';
import {
  failOnConsoleErrors,
  openBrowser,
  screenshot,
  seriousA11yViolations,
  signIn,
  type Browser,
} from './console-browser';
import { consoleDeliveryTests } from './console-deliveries';

/** The operator console in Chromium against the whole Set B stack. */
describe('Set B operator console', () => {
  let svc: TestService;
  let w: World;
  let receiver: Receiver;
  let browser: BrowserContext;
  let closeBrowser: () => Promise<void>;
  let opened: Browser | undefined;
  failOnConsoleErrors(() => opened);
  let page: Page;

  /** Set B reaches pending_review when the investor pays at the hosted checkout (spec §3). */
  async function paidSubscription(units = 4): Promise<string> {
    const id = await signedSubscription(w, units);
    const session = await w.api.post(`/issuance/subscriptions/${id}/create-checkout-session`, w.investor.token, {
      paymentMethod: 'card',
      successUrl: 'https://investor.example/paid',
      cancelUrl: 'https://investor.example/cancelled',
    });
    const paid = await fetch(`${session.body.data.session_url}/complete`, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(paid.status).toBe(303);
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
    return id;
  }

  beforeAll(async () => {
    [svc, receiver] = await Promise.all([
      startService({ set: 'B', env: { DEV_IDP_ENABLED: 'true', WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } }),
      Receiver.start(),
    ]);
    w = await world(svc);
    opened = await openBrowser();
    ({ context: browser, close: closeBrowser } = opened);
    page = await browser.newPage();
  }, 120_000);
  afterAll(async () => {
    await closeBrowser?.();
    await svc?.stop();
    await receiver?.stop();
  });

  it('signs staff in and approves a paid subscription from the queue', async () => {
    const id = await paidSubscription();
    await signIn(page, svc, {
      userId: `console-staff-${randomUUID().slice(0, 8)}`,
      orgId: w.staff.orgId,
      roles: ['staff'],
    });
    const card = page.getByTestId(`queue-card-${id}`);
    expect(await card.textContent()).toContain('50.00 USD');
    expect(await card.textContent()).toMatch(/Payment\s*received/);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByTestId(`approve-${id}`).click();
    await card.getByTestId('notice').waitFor();
    expect((await subscription(w, id)).status).toBe('approved');
    await screenshot(page, 'b-01-approved');
  });

  it('rejects with a reason', async () => {
    const id = await paidSubscription(2);
    await page.goto(`${svc.baseUrl}/console/`);
    await page.getByTestId(`reject-open-${id}`).click();
    await page
      .getByTestId(`queue-card-${id}`)
      .getByLabel('Reason for rejecting (the investor is told)')
      .fill('Investor is not eligible for this offering');
    await page.getByTestId(`reject-submit-${id}`).click();
    await page.getByTestId(`queue-card-${id}`).getByTestId('notice').waitFor();
    expect(await subscription(w, id)).toMatchObject({
      status: 'rejected',
      status_reason: 'Investor is not eligible for this offering',
    });
    await screenshot(page, 'b-02-rejected');
  });

  it('issues shares for an approved subscription, completing it', async () => {
    const id = await paidSubscription(3);
    const staffApi = await actor(svc, w.staff.orgId, ['staff']);
    expect((await w.api.post(`/issuance/subscriptions/${id}/approve`, staffApi.token)).status).toBe(200);
    await page.goto(`${svc.baseUrl}/console/funds`);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByTestId(`issue-shares-${id}`).click();
    await page.locator(`#issue-${id}`).getByTestId('notice').waitFor();
    const done = await subscription(w, id);
    expect(done).toMatchObject({ status: 'completed' });
    expect(done.shares_id).toEqual(expect.any(String));
    expect(await page.locator(`#issue-${id}`).textContent()).toContain(done.shares_id);
    await screenshot(page, 'b-03-shares-issued');

    await page.goto(`${svc.baseUrl}/console/subscriptions/${id}`);
    const history = await page.getByTestId('history').textContent();
    expect(history).toContain('shares.issued');
    expect(history).toContain('subscription.completed');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'b-04-detail');
  });

  consoleDeliveryTests(() => ({ svc, staff: w.staff, receiver, page }));

  // Last: it signs the page in as an admin (docs/decisions/0284-refunds.md).
  it('refunds part of a voided subscription from the funds page, as an admin', async () => {
    const id = await paidSubscription(4);
    expect(
      (await w.api.post(`/issuance/subscriptions/${id}/void`, w.admin.token, { reason: 'withdrawn' })).status,
    ).toBe(200);
    await browser.clearCookies(); // the staff session ends; an admin signs in
    await signIn(page, svc, {
      userId: `console-admin-${randomUUID().slice(0, 8)}`,
      orgId: w.staff.orgId,
      roles: ['admin'],
    });
    await page.goto(`${svc.baseUrl}/console/funds`);
    await page.getByLabel('Subscription id').fill(id);
    await page.getByTestId('refund-lookup').click();
    expect(await page.getByTestId('amount-received').textContent()).toBe('50.00 USD');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.getByLabel(/Amount to refund/).fill('60.00');
    await page.getByLabel(/Reason/).fill('too much');
    await page.getByTestId('refund-submit').click();
    expect(await page.getByTestId('refusal').textContent()).toContain('REFUND_EXCEEDS_REFUNDABLE');
    await page.getByLabel(/Amount to refund/).fill('20.00');
    await page.getByLabel(/Reason/).fill('part of it');
    await page.getByTestId('refund-submit').click();
    expect(await page.getByTestId('notice').textContent()).toContain('20.00 of 50.00 USD');
    expect(await page.getByTestId('amount-refunded').textContent()).toBe('20.00 USD');
    expect(await subscription(w, id)).toMatchObject({ status: 'voided', amount_refunded: '20.00' });
    await screenshot(page, 'b-05-refund');
  });
});
