import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { startService, type TestService } from '../support/service';
import { reaches, returnSite, signedSubscription, world, type World } from './payment-helpers';

// Debian's chromium (scripts/tools.sh chromium); scripts/test.sh exports its path.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let site: Awaited<ReturnType<typeof returnSite>>;
beforeAll(async () => {
  site = await returnSite();
});
afterAll(() => site?.close());

/**
 * Chromium on a fresh profile. Closed before its service stops: the service waits for open
 * keep-alive connections, and the browser holds some.
 */
async function openBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const executablePath = process.env.CHROMIUM_PATH;
  if (!executablePath) throw new Error('CHROMIUM_PATH is not set: run the tests with scripts/test.sh');
  const profile = mkdtempSync(join(tmpdir(), 'tranche-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
    timeout: 60_000,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A person in a real browser on the sandbox's hosted checkout page (Set B). */
describe('Set B sandbox checkout in headless Chromium', () => {
  let svc: TestService;
  let w: World;
  let browser: BrowserContext;
  let closeBrowser: () => Promise<void>;

  beforeAll(async () => {
    svc = await startService({ set: 'B' });
    w = await world(svc);
    ({ context: browser, close: closeBrowser } = await openBrowser());
  }, 120_000);
  afterAll(async () => {
    await closeBrowser?.();
    await svc?.stop();
  });

  async function checkoutUrl(id: string): Promise<string> {
    const res = await w.api.post(`/issuance/subscriptions/${id}/create-checkout-session`, w.investor.token, {
      paymentMethod: 'card',
      successUrl: `${site.url}/paid?subscription=${id}`,
      cancelUrl: `${site.url}/cancelled?subscription=${id}`,
    });
    expect(res.status).toBe(200);
    return res.body.data.session_url;
  }

  it('pays on the hosted page, lands back on the investor site, and the subscription moves to pending_review', async () => {
    const id = await signedSubscription(w, 4);
    const page = await browser.newPage();
    await page.goto(await checkoutUrl(id));
    expect(await page.getByTestId('amount').textContent()).toBe('50.00 USD');
    await page.getByTestId('pay').click();
    await page.waitForURL(`${site.url}/paid?subscription=${id}`, { timeout: 30_000 });
    expect(await page.getByTestId('back').textContent()).toContain('/paid');
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });

    // Back to the same session page: it is closed now.
    await page.goBack();
    await page.reload();
    expect(await page.getByTestId('closed').textContent()).toContain('complete');
    await page.close();
  }, 90_000);

  it('declines, returns to the cancel URL with payment failed, then pays on a new session', async () => {
    const id = await signedSubscription(w, 2);
    const page = await browser.newPage();
    await page.goto(await checkoutUrl(id));
    await page.getByTestId('decline').click();
    await page.waitForURL(`${site.url}/cancelled?subscription=${id}`, { timeout: 30_000 });
    await reaches(w, id, { status: 'pending_payment', payment_status: 'failed' });

    await page.goto(await checkoutUrl(id));
    await page.getByTestId('pay').click();
    await page.waitForURL(`${site.url}/paid?subscription=${id}`, { timeout: 30_000 });
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
    await page.close();
  }, 90_000);
});

/** Set A: linking a card on the hosted setup page, then approval collects it to escrow. */
describe('Set A sandbox setup in headless Chromium', () => {
  let svc: TestService;
  let w: World;
  let browser: BrowserContext;
  let closeBrowser: () => Promise<void>;

  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { SANDBOX_SETTLEMENT_DELAY_MS: '200' } });
    w = await world(svc);
    ({ context: browser, close: closeBrowser } = await openBrowser());
  }, 120_000);
  afterAll(async () => {
    await closeBrowser?.();
    await svc?.stop();
  });

  it('links a card on the setup page, and the approved subscription completes in escrow', async () => {
    const id = await signedSubscription(w, 4);
    const res = await w.api.post(`/issuance/subscriptions/${id}/create-setup-session`, w.investor.token, {
      paymentMethod: 'card',
      successUrl: `${site.url}/linked?subscription=${id}`,
      cancelUrl: `${site.url}/cancelled?subscription=${id}`,
    });
    const page = await browser.newPage();
    await page.goto(res.body.data.session_url);
    await page.getByTestId('complete').click();
    await page.waitForURL(`${site.url}/linked?subscription=${id}`, { timeout: 30_000 });
    await page.close();

    expect((await w.api.post(`/issuance/subscriptions/${id}/finalize-setup`, w.investor.token)).status).toBe(200);
    await w.api.post(`/issuance/subscriptions/${id}/submit-for-review`, w.investor.token, {});
    await w.api.post(`/issuance/subscriptions/${id}/approve`, w.staff.token);
    await reaches(w, id, { status: 'completed', payment_status: 'in_escrow' });
  }, 90_000);
});
