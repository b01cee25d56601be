import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
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
export const SHOTS = join(__dirname, '../../test-output/console');

/**
 * Chromium on a fresh profile at a laptop's size. CSP is bypassed only so the test can inject
 * axe-core into the page; the console's own scripts are loaded as the CSP allows.
 */
export async function openBrowser(
  opts: { ignoreHTTPSErrors?: boolean } = {},
): Promise<{ context: BrowserContext; close(): Promise<void> }> {
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
    bypassCSP: true,
    // Behind a TLS gateway with Caddy's own local CA, which this fresh profile does not trust.
    ignoreHTTPSErrors: opts.ignoreHTTPSErrors ?? false,
  });
  context.setDefaultTimeout(30_000);
  return {
    context,
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

/** axe-core over the page as it is now: the serious and critical violations, as readable lines. */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
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
