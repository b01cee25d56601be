import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { newOrg } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { failOnConsoleErrors, openBrowser, screenshot, signIn, type Browser } from './console-browser';

const TTL_SECONDS = 60;

/** A console session lives on while its person works (issue 22); the same in both sets. */
describe('console session', () => {
  let svc: TestService;
  let opened: Browser | undefined;
  let page: Page;
  failOnConsoleErrors(() => opened);
  const session = async () => (await opened!.context.cookies()).find((c) => c.name === 'tranche_console')?.value;
  const pause = (seconds: number) => new Promise((r) => setTimeout(r, seconds * 1000));

  beforeAll(async () => {
    svc = await startService({
      set: 'A',
      env: { DEV_IDP_ENABLED: 'true', ACCESS_TOKEN_TTL_SECONDS: String(TTL_SECONDS) },
    });
    opened = await openBrowser();
    page = await opened.context.newPage();
  }, 120_000);
  afterAll(async () => {
    await opened?.close();
    await svc?.stop();
  });

  it('stays signed in past the access token’s lifetime while the person keeps working', async () => {
    await signIn(page, svc, { userId: `session-${randomUUID().slice(0, 8)}`, orgId: newOrg(), roles: ['staff'] });
    const first = await session();
    await pause(TTL_SECONDS / 2 + 5);
    await page.goto(`${svc.baseUrl}/console/webhooks`);
    const second = await session();
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    await pause(TTL_SECONDS / 2 + 5);
    // The first token has expired by now; the renewed one has not.
    await page.goto(`${svc.baseUrl}/console/events`);
    expect(page.url()).toBe(`${svc.baseUrl}/console/events`);
    await screenshot(page, 'session-kept-alive');
  }, 120_000);
});
