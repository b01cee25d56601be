import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { freePort } from '../../scripts/lib/free-port';
import { startTlsGateway, type RunningGateway } from '../../scripts/lib/gateway';
import { startServicePair, type ServicePair } from '../faults/support/service-pair';
import { wireFlowWorld } from '../faults/support/subscription-flow';
import { http } from '../support/http';
import { freshDatabase } from '../support/service';
import { openBrowser, screenshot, signIn } from './console-browser';
import { toolPath } from '../support/tools';

/**
 * The console behind TLS termination, as production runs it
 * (docs/decisions/0197-console-origin-behind-tls.md): Chromium speaks HTTPS to a TLS end, which hands plain
 * HTTP to a gateway with deploy/gateway/Caddyfile's settings (it trusts no proxy before it, so the API hears
 * X-Forwarded-Proto: http), then to the API and worker processes with TRUST_PROXY on and PUBLIC_BASE_URL
 * https. The API trusts the gateway's local CA (NODE_EXTRA_CA_CERTS), as a deployment trusts its own, since
 * the development identity provider's token endpoint is reached at the public address.
 */
describe('the console behind a TLS-terminating gateway', () => {
  let pair: ServicePair;
  let gateway: RunningGateway;
  let browser: BrowserContext;
  let closeBrowser: () => Promise<void>;
  let page: Page;
  let databaseUrl: string;
  const dir = mkdtempSync(join(tmpdir(), 'console-tls-'));

  beforeAll(async () => {
    const caddy = toolPath('caddy');
    const [port, apiPort, innerPort] = [await freePort(), await freePort(), await freePort()];
    const gatewayDir = join(dir, 'gateway');
    gateway = await startTlsGateway({
      caddy,
      port,
      innerPort,
      upstreams: [apiPort],
      dataDir: gatewayDir,
      output: createWriteStream(join(dir, 'caddy-output.log')),
    });
    databaseUrl = await freshDatabase();
    pair = await startServicePair({
      databaseUrl,
      temporalAddress: process.env.TEMPORAL_ADDRESS!,
      port: apiPort,
      extra: {
        DEV_IDP_ENABLED: 'true',
        TRUST_PROXY: 'true',
        PUBLIC_BASE_URL: gateway.url,
        NODE_EXTRA_CA_CERTS: join(gatewayDir, 'caddy', 'pki', 'authorities', 'local', 'root.crt'),
      },
    });
    ({ context: browser, close: closeBrowser } = await openBrowser({ ignoreHTTPSErrors: true }));
    page = await browser.newPage();
  }, 240_000);
  afterAll(async () => {
    await closeBrowser?.();
    await pair?.stop();
    await gateway?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs staff in over HTTPS, with a Secure session cookie, and approves from the queue', async () => {
    const w = await wireFlowWorld({ baseUrl: pair.baseUrl, pem: pair.pem, databaseUrl });
    const s = await w.toReview();
    await signIn(
      page,
      { baseUrl: gateway.url, config: { PUBLIC_BASE_URL: gateway.url } },
      { userId: `tls-staff-${randomUUID().slice(0, 8)}`, orgId: w.org, roles: ['staff'] },
    );
    expect(page.url()).toBe(`${gateway.url}/console/`);
    const session = (await browser.cookies()).find((c) => c.name === 'tranche_console');
    expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/console' });

    // A console POST (htmx, with the browser's Origin: https://localhost:<port>).
    await page.getByTestId(`approve-${s.id}`).click();
    await page.getByTestId(`queue-card-${s.id}`).getByTestId('notice').waitFor();
    expect(await page.getByTestId(`queue-card-${s.id}`).textContent()).toContain(
      'Approved: the subscription is now approved',
    );
    const after = await http(pair.baseUrl).get(`/issuance/subscriptions/${s.id}`, w.tokens.staff);
    expect(after.body.data.status).toBe('approved');
    await screenshot(page, 'tls-01-approved-over-https');
  });
});
