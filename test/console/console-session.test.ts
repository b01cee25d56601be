import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { failOnConsoleErrors, openBrowser, screenshot, signIn, type Browser } from './console-browser';

const TTL_SECONDS = 60;
const COOKIE = 'tranche_console';

/**
 * A console session lives on while its person works, and ends when they sign out or an
 * administrator revokes it; a token that no console sign-in issued is never renewed
 * (docs/decisions/0271-console-sessions-server-side.md). The same in both sets.
 */
describe('console session', () => {
  let svc: TestService;
  let opened: Browser | undefined;
  let page: Page;
  failOnConsoleErrors(() => opened);
  const session = async () => (await opened!.context.cookies()).find((c) => c.name === COOKIE)?.value;
  const pause = (seconds: number) => new Promise((r) => setTimeout(r, seconds * 1000));
  /** A console request carrying `token` as its session cookie, as a browser (or a thief) sends it. */
  const withCookie = (path: string, token: string, init: RequestInit = {}) =>
    fetch(`${svc.baseUrl}${path}`, {
      ...init,
      redirect: 'manual',
      headers: { cookie: `${COOKIE}=${token}`, ...(init.headers as Record<string, string>) },
      signal: AbortSignal.timeout(30_000),
    });
  const sessionCookiesSet = (res: Response) =>
    res.headers
      .getSetCookie()
      .filter((c) => c.startsWith(`${COOKIE}=`))
      .map((c) => c.slice(COOKIE.length + 1).split(';')[0]!)
      .filter((value) => value !== '');
  const signInAs = async (who: { orgId: string; roles: ('staff' | 'admin')[] }) => {
    await opened!.context.clearCookies();
    await signIn(page, svc, { userId: `session-${randomUUID().slice(0, 8)}`, ...who });
    return (await session())!;
  };

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
    const first = await signInAs({ orgId: newOrg(), roles: ['staff'] });
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

  it('does not renew an access token from the token exchange put in the console cookie past half its life', async () => {
    const api = http(svc.baseUrl);
    const org = newOrg();
    const exchanged: string[] = [];
    for (const roles of [['investor'], ['staff']]) {
      const minted = await api.post('/dev-idp/mint', undefined, { user_id: `x-${roles[0]}`, org_id: org, roles });
      const res = await api.post(
        '/identity/auth/exchange',
        undefined,
        { token: minted.body.data.id_token },
        { 'x-api-key': minted.body.data.api_key },
      );
      expect(res.status).toBe(200);
      exchanged.push(res.body.data.access_token);
    }
    await pause(TTL_SECONDS / 2 + 2);
    for (const token of exchanged) {
      // Still a valid bearer token for the API, but no console sign-in issued it.
      expect((await api.get('/notifications/event-types', token)).status).toBe(200);
      const res = await withCookie('/console/webhooks', token);
      expect(sessionCookiesSet(res)).toEqual([]);
      expect({ status: res.status, location: res.headers.get('location') }).toEqual({
        status: 302,
        location: '/console/sign-in',
      });
    }
  }, 120_000);

  it('refuses the old cookie after sign-out, in the console and as a bearer token', async () => {
    const org = newOrg();
    const token = await signInAs({ orgId: org, roles: ['staff'] });
    expect((await withCookie('/console/webhooks', token)).status).toBe(200);
    const out = await withCookie('/console/auth/sign-out', token, {
      method: 'POST',
      headers: { origin: new URL(svc.config.PUBLIC_BASE_URL!).origin },
    });
    expect(out.status).toBe(303);
    const reused = await withCookie('/console/webhooks', token);
    expect({ status: reused.status, location: reused.headers.get('location') }).toEqual({
      status: 302,
      location: '/console/sign-in',
    });
    const bearer = await http(svc.baseUrl).get('/notifications/event-types', token);
    expect({ status: bearer.status, code: bearer.body.error.code }).toEqual({ status: 401, code: 'TOKEN_REVOKED' });
  });

  it("lets an administrator list the organisation's console sessions and revoke one, which ends it", async () => {
    const org = newOrg();
    const token = await signInAs({ orgId: org, roles: ['staff'] });
    const sid = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sid as string;
    const admin = await actor(svc, org, ['admin']);
    const api = http(svc.baseUrl);

    const listed = await api.get('/identity/console-sessions', admin.token);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      expect.objectContaining({ id: sid, org_id: org, roles: ['staff'], status: 'live', revoked_at: null }),
    ]);
    // Another organisation's administrator neither sees nor ends it.
    const stranger = await actor(svc, newOrg(), ['admin']);
    expect((await api.get('/identity/console-sessions', stranger.token)).body.data).toEqual([]);
    expect((await api.delete(`/identity/console-sessions/${sid}`, stranger.token)).status).toBe(404);
    // Staff may not manage sessions.
    expect((await api.get('/identity/console-sessions', (await actor(svc, org, ['staff'])).token)).status).toBe(403);

    expect((await api.delete(`/identity/console-sessions/${sid}`, admin.token)).status).toBe(204);
    await page.goto(`${svc.baseUrl}/console/webhooks`);
    await page.waitForURL(/\/console\/sign-in$/);
    const after = await api.get('/identity/console-sessions', admin.token);
    expect(after.body.data[0]).toMatchObject({ id: sid, status: 'revoked', revoked_by: admin.userId });
    const audit = await api.get('/audit/events?action=console_session.revoke', admin.token);
    expect(audit.body.data.items).toEqual([
      expect.objectContaining({ action: 'console_session.revoke', subject: { type: 'console_session', id: sid } }),
    ]);
  });
});
