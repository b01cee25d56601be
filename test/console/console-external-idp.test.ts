import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { loadConfig } from '../../lib/runtime/config';
import { newOrg } from '../support/fixtures';
import { startService, type TestService } from '../support/service';

const AUDIENCE = 'tranche-console';

/**
 * An organisation's own OIDC provider on a real port: discovery, JWKS, an authorize endpoint that
 * signs in whoever `who` names at once, and a token endpoint that checks PKCE. `nonceOverride`
 * makes it answer with another nonce than it was sent, as a replayed token would carry.
 */
async function externalIdp() {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const codes = new Map<string, { nonce: string; challenge: string }>();
  const state = { who: { sub: 'ext-staff', org_id: '', roles: ['staff'] }, nonceOverride: null as string | null };
  let url = '';
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url!, url);
    const json = (body: unknown, status = 200) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (u.pathname === '/.well-known/openid-configuration')
      return json({
        issuer: url,
        authorization_endpoint: `${url}/authorize`,
        token_endpoint: `${url}/token`,
        jwks_uri: `${url}/jwks`,
      });
    if (u.pathname === '/jwks') return json({ keys: [jwk] });
    if (u.pathname === '/authorize') {
      const code = randomUUID();
      codes.set(code, { nonce: u.searchParams.get('nonce')!, challenge: u.searchParams.get('code_challenge')! });
      const back = new URL(u.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', u.searchParams.get('state')!);
      return res.writeHead(302, { location: back.toString() }).end();
    }
    if (u.pathname === '/token' && req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const issued = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (
          !issued ||
          createHash('sha256')
            .update(form.get('code_verifier') ?? '')
            .digest('base64url') !== issued.challenge
        )
          return json({ error: 'invalid_grant' }, 400);
        void sign(privateKey, url, state.who, state.nonceOverride ?? issued.nonce).then((idToken) =>
          json({ id_token: idToken, token_type: 'Bearer' }),
        );
      });
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    state,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const sign = (key: CryptoKey, issuer: string, who: { sub: string; org_id: string; roles: string[] }, nonce: string) =>
  new SignJWT({ org_id: who.org_id, roles: who.roles, nonce })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(issuer)
    .setAudience(AUDIENCE)
    .setSubject(who.sub)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key);

/** Console sign-in through an organisation's own identity provider, pinned to its organisation (issue 15). */
describe('Console sign-in through a configured identity provider', () => {
  let svc: TestService;
  let idp: Awaited<ReturnType<typeof externalIdp>>;
  const org = newOrg();

  beforeAll(async () => {
    idp = await externalIdp();
    idp.state.who.org_id = org;
    svc = await startService({
      set: 'A',
      env: {
        DEV_IDP_ENABLED: 'false',
        OIDC_ISSUERS: JSON.stringify([
          { issuer: idp.url, jwks_uri: `${idp.url}/jwks`, audience: AUDIENCE, org_ids: [org] },
        ]),
        CONSOLE_OIDC_ISSUER: idp.url,
      },
    });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await idp?.close();
  });

  /** What a browser does from the sign-in button to the console: follows redirects, keeps cookies. */
  async function signInFlow(): Promise<{ status: number; body: string; session: string | null }> {
    const start = await fetch(`${svc.baseUrl}/console/auth/start`, {
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(start.headers.get('location')).toMatch(new RegExp(`^${idp.url}/authorize\\?`));
    const pending = start.headers.get('set-cookie')!.split(';')[0]!;
    const back = await fetch(start.headers.get('location')!, {
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    const done = await fetch(back.headers.get('location')!, {
      headers: { cookie: pending },
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    const session =
      (done.headers.getSetCookie().find((c) => c.startsWith('tranche_console=ey')) ?? null)?.split(';')[0] ?? null;
    return { status: done.status, body: await done.text(), session };
  }

  it('signs staff of the pinned organisation in, and the session reaches the console', async () => {
    const { status, session } = await signInFlow();
    expect(status).toBe(302);
    expect(session).not.toBeNull();
    const queue = await fetch(`${svc.baseUrl}/console/`, {
      headers: { cookie: session! },
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(queue.status).toBe(200);
    expect(await queue.text()).toContain(`org ${org}`);
  });

  it('refuses a user whose ID token names an organisation the provider is not pinned to', async () => {
    idp.state.who.org_id = newOrg();
    try {
      const { status, body, session } = await signInFlow();
      expect(status).toBe(403);
      expect(body).toContain('ISSUER_NOT_ALLOWED_FOR_ORG');
      expect(session).toBeNull();
    } finally {
      idp.state.who.org_id = org;
    }
  });

  it('refuses an ID token that was not issued for this sign-in (nonce)', async () => {
    idp.state.nonceOverride = 'a-nonce-from-some-other-sign-in';
    try {
      const { status, body, session } = await signInFlow();
      expect(status).toBe(401);
      expect(body).toContain('ID_TOKEN_NONCE_MISMATCH');
      expect(session).toBeNull();
    } finally {
      idp.state.nonceOverride = null;
    }
  });

  it('refuses at start a console provider that is not pinned to organisations', () => {
    const env = {
      DATABASE_URL: 'postgres://localhost/x',
      OIDC_ISSUERS: JSON.stringify([
        { issuer: 'https://idp.example', jwks_uri: 'https://idp.example/jwks', audience: 'a' },
      ]),
      CONSOLE_OIDC_ISSUER: 'https://idp.example',
    };
    expect(() => loadConfig(env)).toThrow(/CONSOLE_OIDC_ISSUER: must be one of OIDC_ISSUERS and pinned/);
  });
});
