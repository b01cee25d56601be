import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import type { Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { PATHS, registerHook } from '../webhooks/support/hooks';
import { type Receiver } from '../webhooks/support/receiver';
import { until } from '../support/wait';
import { screenshot, seriousA11yViolations } from './console-browser';

/** Webhook health and manual retry, the same in both sets (only the API paths differ). */
export function consoleDeliveryTests(
  world: () => { svc: TestService; staff: Actor; receiver: Receiver; page: Page },
): void {
  it('shows an endpoint’s success rate as a chart, its failures with response codes and the deliveries waiting on a retry, and retries one', async () => {
    const { svc, staff, receiver, page } = world();
    const api = http(svc.baseUrl);
    const paths = PATHS[svc.set];
    const hook = `flaky-${randomUUID().slice(0, 8)}`;
    // Answers 503 to the first attempt of each of the two pings, then 200.
    const endpoint = await registerHook(svc, receiver, staff, hook, ['test.ping'], { responses: [503, 503] });
    const first = (await api.post(`${paths.endpoints}/${endpoint.id}/test`, staff.token)).body.data
      .delivery_id as string;
    const second = (await api.post(`${paths.endpoints}/${endpoint.id}/test`, staff.token)).body.data
      .delivery_id as string;
    const status = async (id: string) =>
      (await api.get(`${paths.deliveries}/${id}`, staff.token)).body.data?.status as string | undefined;
    await until('both failed', async () =>
      (await status(first)) === 'failed' && (await status(second)) === 'failed' ? true : undefined,
    );

    await page.goto(`${svc.baseUrl}/console/webhooks`);
    expect(await seriousA11yViolations(page)).toEqual([]);
    const row = page.getByRole('row').filter({ hasText: receiver.url(hook) });
    expect([await row.getByTestId('limits').textContent(), await row.getByTestId('circuit').textContent()]).toEqual([
      '32 at once',
      'closed',
    ]);
    await page.getByRole('link', { name: receiver.url(hook) }).click();
    await page.waitForURL(`${svc.baseUrl}/console/webhooks/${endpoint.id}`);
    expect(await page.getByTestId('success-summary').textContent()).toContain('0.0 % over 2 attempts');
    // Chart.js drew the series on the canvas.
    expect(
      await page
        .locator('#success-chart')
        .evaluate((c) =>
          (globalThis as any).Chart.getChart(c)?.data.datasets[0].data.filter((v: number | null) => v !== null),
        ),
    ).toEqual([0]);
    expect(await page.getByTestId('failures').locator('[data-testid="response"]').allTextContents()).toEqual([
      '503',
      '503',
    ]);
    const waiting = await page.getByTestId('waiting').textContent();
    expect(waiting).toContain(first.slice(0, 8));
    expect(waiting).toContain(second.slice(0, 8));
    expect(await page.locator(`#retry-${first} [data-testid="delivery-workflow-link"]`).getAttribute('href')).toBe(
      `${svc.config.TEMPORAL_UI_URL}/namespaces/default/workflows/webhook-delivery-${first}`,
    );
    expect(await seriousA11yViolations(page)).toEqual([]);

    await page.getByTestId(`retry-${first}`).first().focus();
    await page.keyboard.press('Enter');
    await page.locator(`#retry-${first}`).getByTestId('notice').waitFor();
    expect(await page.locator(`#retry-${first}`).textContent()).toContain('accepted');
    await until('retried delivery succeeded', async () => ((await status(first)) === 'success' ? true : undefined));
    expect(await status(second)).toBe('failed');
    await screenshot(page, `${svc.set.toLowerCase()}-08-webhook-retry`);

    await page.reload();
    expect(await page.getByTestId('success-summary').textContent()).toContain('33.3 % over 3 attempts');
    await screenshot(page, `${svc.set.toLowerCase()}-09-webhook-health`);
  });
}
