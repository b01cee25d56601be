import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { actor, type Actor } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { reaches, signedSubscription, subscription, world, type World } from '../payments/payment-helpers';
import { PATHS } from '../webhooks/support/hooks';
import { failOnConsoleErrors, openBrowser, screenshot, signIn, type Browser } from './console-browser';

/**
 * The console's forms that move money or secrets, submitted twice the way a person does it (a
 * double click) and reloaded after: each moves once (docs/decisions/0375-console-forms-carry-their-key.md).
 * Chromium against the whole Set B stack with the sandbox processor.
 */
describe('money and secret forms in the console, double-submitted and reloaded', () => {
  let svc: TestService;
  let w: World;
  let admin: Actor;
  let opened: Browser | undefined;
  let page: Page;
  failOnConsoleErrors(() => opened);

  const sql = <T>(query: string, params: unknown[]) => svc.orm.em.getConnection().execute<T[]>(query, params);
  /**
   * A person's double click: the form is sent, and while its answer is still on its way (the page
   * still shows the form) it is sent again. Chromium folds a plain dblclick into one submission, and
   * Playwright's own click waits for the pending navigation, so both clicks are the button's click()
   * in the page, the second once the first request has left (the caller counts both requests).
   */
  const submitTwice = async (testId: string, path: RegExp) => {
    const left = page.waitForRequest((r) => r.method() === 'POST' && path.test(new URL(r.url()).pathname));
    await page.evaluate((id) => {
      const button = (globalThis as any).document.querySelector(`[data-testid="${id}"]`);
      button.click();
      setTimeout(() => button.click(), 60);
    }, testId);
    await left;
  };
  /** Every POST the page sends to `path`, as the browser sent it. */
  const postsTo = (path: RegExp) => {
    const seen: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && path.test(new URL(r.url()).pathname)) seen.push(r.url());
    });
    return seen;
  };

  beforeAll(async () => {
    svc = await startService({ set: 'B', env: { DEV_IDP_ENABLED: 'true', WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } });
    w = await world(svc);
    admin = await actor(svc, w.staff.orgId, ['staff', 'admin']);
    opened = await openBrowser();
    page = await opened.context.newPage();
    await signIn(page, svc, {
      userId: `money-admin-${randomUUID().slice(0, 8)}`,
      orgId: w.staff.orgId,
      roles: ['staff', 'admin'],
    });
  }, 120_000);
  afterAll(async () => {
    await opened?.close();
    await svc?.stop();
  });

  it('refunds once when the refund form is sent twice, and not again on a reload of the result', async () => {
    const id = await signedSubscription(w, 4); // 50.00 USD
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
    const voided = await w.api.post(
      `/issuance/subscriptions/${id}/void`,
      w.admin.token,
      { reason: 'withdrawn' },
      {
        'idempotency-key': randomUUID(),
      },
    );
    expect(voided.status).toBe(200);

    await page.goto(`${svc.baseUrl}/console/funds`);
    await page.getByLabel('Subscription id').fill(id);
    await page.getByTestId('refund-lookup').click();
    await page.getByLabel(/Amount to refund/).fill('20.00');
    await page.getByLabel(/Reason/).fill('part of it, sent twice');
    const posts = postsTo(/^\/console\/funds\/refund$/);
    await submitTwice('refund-submit', /^\/console\/funds\/refund$/);
    await page.getByTestId('notice').waitFor();
    await page.waitForLoadState('load');
    expect(posts).toHaveLength(2); // the browser did send the form twice

    const refunds = () =>
      sql<{ amount_cents: string }>('select amount_cents from payment_sandbox_refunds where reference = ?', [
        session.body.data.session_id,
      ]);
    expect((await refunds()).map((r) => r.amount_cents)).toEqual(['2000']);
    expect(await subscription(w, id)).toMatchObject({ amount_refunded: '20.00', payment_status: 'received' });
    expect(await page.getByTestId('amount-refunded').textContent()).toBe('20.00 USD');

    // The result is a page of its own (POST-redirect-GET): reloading it sends nothing.
    await page.reload();
    await page.getByTestId('notice').waitFor();
    expect(posts).toHaveLength(2);
    expect((await refunds()).map((r) => r.amount_cents)).toEqual(['2000']);
    expect(await subscription(w, id)).toMatchObject({ amount_refunded: '20.00' });
    await screenshot(page, 'money-01-refund-once');

    // The subscription's page shows the refund as it was asked of the processor and what it answered.
    await page.goto(`${svc.baseUrl}/console/subscriptions/${id}`);
    expect(await page.getByTestId('refund-intent-succeeded').count()).toBe(1);
    expect(await page.getByTestId('refund-intents').textContent()).toContain('20.00 USD');
  });

  it('rotates once when the rotate form is sent twice, and shows the new secret once, sealed in between', async () => {
    const registered = await w.api.post(
      PATHS.B.endpoints,
      admin.token,
      { url: 'http://127.0.0.1:9/hook', description: 'rotated twice', eventTypes: ['*'] },
      { 'idempotency-key': randomUUID() },
    );
    expect(registered.status).toBe(201);
    const endpointId = registered.body.data.id as string;
    const rotations = async () =>
      (
        await sql<{ n: number }>(
          `select count(*)::int as n from audit_events where subject_id = ? and action = 'webhook_endpoint.rotate_secret'`,
          [endpointId],
        )
      )[0]!.n;

    await page.goto(`${svc.baseUrl}/console/webhooks/${endpointId}`);
    await page.getByTestId('rotate-open').click();
    const posts = postsTo(/\/rotate-secret$/);
    // The cookies the rotate answers set, as the browser received them.
    const flashed: string[] = [];
    page.on('response', async (r) => {
      if (r.request().method() !== 'POST' || !/\/rotate-secret$/.test(new URL(r.url()).pathname)) return;
      for (const h of await r.headersArray()) if (h.name.toLowerCase() === 'set-cookie') flashed.push(h.value);
    });
    await submitTwice('rotate', /\/rotate-secret$/);
    await page.getByTestId('signing-secret').waitFor();
    await page.waitForLoadState('load');
    expect(posts).toHaveLength(2);
    const shown = await page.getByTestId('signing-secret').inputValue();
    expect(shown).toMatch(/^whsec_/);
    expect(shown).not.toBe(registered.body.data.signing_secret);
    expect(await rotations()).toBe(1);

    // Between the POST and its page the secret was sealed: not in the cookie in clear, in any encoding,
    // sent only to the secret's page, same-site, script-proof and short-lived.
    expect(flashed.length).toBeGreaterThan(0);
    const raw = shown.slice('whsec_'.length);
    for (const cookie of flashed) {
      for (const form of [shown, raw, encodeURIComponent(raw), Buffer.from(shown).toString('base64url')])
        expect(cookie).not.toContain(form);
      expect(Buffer.from(cookie.split(';')[0]!.split('=')[1]!, 'base64url').toString()).not.toContain(raw);
      expect(cookie).toMatch(new RegExp(`path=/console/webhooks/${endpointId}/secret`, 'i'));
      expect(cookie).toMatch(/samesite=strict/i);
      expect(cookie).toMatch(/httponly/i);
      const expires = Date.parse(/expires=([^;]+)/i.exec(cookie)![1]!);
      expect(expires - Date.now()).toBeLessThanOrEqual(2 * 60_000 + 5_000);
    }
    // Shown once: the page cleared it, so the browser holds no secret cookie and a reload shows no secret.
    expect((await opened!.context.cookies()).filter((c) => c.name === 'tranche_console_secret')).toEqual([]);
    await page.reload();
    await page.getByTestId('notice').waitFor();
    expect(new URL(page.url()).pathname).toBe(`/console/webhooks/${endpointId}`);
    expect(await page.getByTestId('notice').textContent()).toContain('shown once');
    expect(await page.getByTestId('signing-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(shown);
    expect(posts).toHaveLength(2);
    expect(await rotations()).toBe(1);
    await screenshot(page, 'money-02-rotated-once');
  });
});
