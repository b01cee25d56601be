import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { Role } from '../../domain/principal';
import type { TestService } from '../support/service';

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
/** Screenshots of each test's final screen (git-ignored). */
const SHOTS = join(__dirname, '../../test-output/console');

export interface Browser {
  context: BrowserContext;
  /**
   * What the pages reported as errors since the last call: console errors, CSP refusals, failed
   * subresources, uncaught exceptions (not the status of a page itself, which the test asserts).
   */
  takeConsoleErrors(): string[];
  close(): Promise<void>;
}

/**
 * Chromium on a fresh profile at a laptop's size, with every page's Content-Security-Policy in force
 * (axe-core is evaluated, not injected as a script, so nothing needs it bypassed). Whatever a page
 * reports as an error is collected: call `failOnConsoleErrors` in the describe block.
 */
export async function openBrowser(opts: { ignoreHTTPSErrors?: boolean } = {}): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH;
  if (!executablePath) throw new Error('CHROMIUM_PATH is not set: run the tests with scripts/test.sh');
  mkdirSync(SHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), 'tranche-console-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
    timeout: 60_000,
    viewport: { width: 1440, height: 900 },
    // Behind a TLS gateway with Caddy's own local CA, which this fresh profile does not trust.
    ignoreHTTPSErrors: opts.ignoreHTTPSErrors ?? false,
  });
  context.setDefaultTimeout(30_000);
  const errors: { url: string; text: string }[] = [];
  // A page's own status (a 403 refusal, a 422 form) is the test's to assert; Chromium logs it too.
  const documents = new Set<string>();
  const watch = (page: Page) => {
    page.on('request', (r) => {
      if (r.isNavigationRequest()) documents.add(r.url());
    });
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push({ url: m.location().url || page.url(), text: m.text() });
    });
    page.on('pageerror', (err) => errors.push({ url: page.url(), text: `uncaught ${err.message}` }));
  };
  const documentStatus = (e: { url: string; text: string }) =>
    documents.has(e.url) && e.text.startsWith('Failed to load resource: the server responded with a status of');
  context.pages().forEach(watch);
  context.on('page', watch);
  return {
    context,
    takeConsoleErrors: () =>
      errors
        .splice(0)
        .filter((e) => !documentStatus(e))
        .map((e) => `${e.url}: ${e.text}`),
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Signs in the way a person does: the console's sign-in page, the identity provider's form, back to the queue. */
export async function signIn(
  page: Page,
  svc: { baseUrl: string; config: Pick<TestService['config'], 'PUBLIC_BASE_URL'> },
  who: { userId: string; orgId: string; roles: Role[] },
): Promise<void> {
  await page.goto(`${svc.baseUrl}/console/`);
  await page.waitForURL(/\/console\/sign-in$/);
  await page.getByTestId('sign-in').click();
  await page.waitForURL(/\/dev-idp\/authorize\?/);
  await page.getByLabel('User id').fill(who.userId);
  await page.getByLabel('Organisation id').fill(who.orgId);
  for (const role of ['investor', 'staff', 'admin'] as const) {
    await page.getByLabel(role, { exact: true }).setChecked(who.roles.includes(role));
  }
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${svc.config.PUBLIC_BASE_URL}/console/`);
}

/** Fails the test that ran if any page reported an error while it ran. */
export function failOnConsoleErrors(browser: () => Browser | undefined): void {
  afterEach(() => {
    expect(browser()?.takeConsoleErrors() ?? []).toEqual([]);
  });
}

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core over the page as it is now: the serious and critical violations, as readable lines. */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  // Evaluated by the browser's automation, which the page's CSP does not govern (a <script> would be refused).
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(
            ctx: unknown,
            opts: unknown,
          ): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      resultTypes: ['violations'],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(' ')).slice(0, 3),
    }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.targets.join(', ')}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}
