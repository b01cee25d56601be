import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import type { BehaviourSet } from '../../lib/behaviour-set';
import type { Actor } from '../support/fixtures';
import type { TestService } from '../support/service';
import type { Receiver } from '../webhooks/support/receiver';
import { startWebhookStack, stopWebhookStack } from '../webhooks/support/stack';
import { openBrowser, signIn, type Browser } from './console-browser';

/** What the portal tests drive: a set's whole stack, a receiver, and a staff member signed in in Chromium. */
interface PortalSession {
  svc: TestService;
  receiver: Receiver;
  staff: Actor;
  opened: Browser;
  page: Page;
}

/**
 * Starts the set's service (the dev IdP on, loopback receivers allowed) beside a receiver, and signs a
 * staff member of a new organisation in, in a browser that may use the clipboard.
 */
export async function openPortal(set: BehaviourSet): Promise<PortalSession> {
  const { svc, receiver, staff } = await startWebhookStack(set, { DEV_IDP_ENABLED: 'true' });
  let opened: Browser | undefined;
  try {
    opened = await openBrowser();
    await opened.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.baseUrl });
    const page = await opened.context.newPage();
    await signIn(page, svc, { userId: `portal-${randomUUID().slice(0, 8)}`, orgId: staff.orgId, roles: ['staff'] });
    return { svc, receiver, staff, opened, page };
  } catch (err) {
    await closePortal({ opened, svc, receiver });
    throw err;
  }
}

export async function closePortal(s: Partial<PortalSession>): Promise<void> {
  await s.opened?.close();
  await stopWebhookStack(s);
}

/** The console's own scripts, as a page requests them. */
export const SCRIPTS = '**/console/assets/*.js';

/** Waits until the element with the test id holds the text. */
export async function hasText(page: Page, testId: string, text: string | RegExp): Promise<void> {
  await page.getByTestId(testId).filter({ hasText: text }).first().waitFor({ timeout: 30_000 });
}
