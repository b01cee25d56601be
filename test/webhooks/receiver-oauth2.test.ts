import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { OAuth2Server } from 'oauth2-mock-server';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { PATHS } from './support/hooks';
import { closeServer, firstAttempt as firstAttemptOf, listenOnLoopback } from './support/stack';

const CLIENT_ID = 'tranche-webhooks';
const CLIENT_SECRET = 'client-secret-0123456789-abcdefghij';
const AUDIENCE = 'https://receiver.example';

/**
 * Authenticated receivers: OAuth2 client credentials, against a real authorization server
 * library (oauth2-mock-server) on 127.0.0.1, which checks our client credentials (HTTP Basic) and
 * issues signed JWTs; the receiver verifies each bearer token against the server's keys. Plain http
 * on loopback for both, as WEBHOOK_ALLOW_INSECURE_LOOPBACK allows in tests (production: https only).
 */
describe('authenticated receivers: OAuth2 client credentials', () => {
  let svc: TestService;
  let staff: Actor;
  let api: ReturnType<typeof http>;
  let auth: OAuth2Server;
  let receiver: Server;
  let tokenUrl: string;
  let url: string;
  /** Token requests the authorization server answered, with what they asked for. */
  const tokenRequests: { grant: string; scope: string | undefined; status: number }[] = [];
  /** Tokens the receiver refuses from now on (it "revoked" them). */
  const revoked = new Set<string>();
  /** Lifetime the authorization server gives its next tokens. */
  let expiresIn = 3600;
  const got: { hook: string; token: string; scope: unknown; verified: boolean }[] = [];
  const base = PATHS.A.endpoints;
  /** A second receiver, at another origin (another port): what reaches it, bearer tokens included. */
  let elsewhere: Server;
  let elsewhereUrl: string;
  const reachedElsewhere: { hook: string; authorization: string | undefined }[] = [];

  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } });
    api = http(svc.baseUrl);
    staff = await actor(svc, newOrg(), ['staff']);

    auth = new OAuth2Server();
    await auth.issuer.keys.generate('RS256');
    // The library issues to anyone; a real one checks the client: so does this, at its response hook.
    auth.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => {
      token.payload.aud = AUDIENCE;
      token.payload.sub = CLIENT_ID;
      // As a real server's: two tokens issued in the same second differ (the library's would not).
      token.payload.jti = randomUUID();
    });
    auth.service.on(
      'beforeResponse',
      (response: { body: Record<string, unknown>; statusCode: number }, req: IncomingMessage) => {
        const [user, pass] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
          .toString()
          .split(':')
          .map(decodeURIComponent);
        if (user !== CLIENT_ID || pass !== CLIENT_SECRET) {
          response.statusCode = 401;
          response.body = { error: 'invalid_client', error_description: 'client authentication failed' };
        } else response.body.expires_in = expiresIn;
        const body = (req as IncomingMessage & { body: Record<string, string> }).body;
        tokenRequests.push({ grant: body.grant_type!, scope: body.scope, status: response.statusCode });
      },
    );
    await auth.start(0, '127.0.0.1');
    tokenUrl = `${auth.issuer.url}/token`;
    const keys = createLocalJWKSet({ keys: auth.issuer.keys.toJSON() as never });

    receiver = createServer((req, res) => {
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      req.resume();
      void jwtVerify(token, keys, { issuer: auth.issuer.url!, audience: AUDIENCE }).then(
        ({ payload }) => {
          const ok = !revoked.has(token) && !(req.url === '/strict' && payload.scope !== 'admin');
          got.push({ hook: req.url!.slice(1), token, scope: payload.scope, verified: ok });
          res.writeHead(ok ? 200 : 401).end(ok ? 'ok' : 'bad token');
        },
        () => {
          got.push({ hook: req.url!.slice(1), token, scope: undefined, verified: false });
          res.writeHead(401).end('no valid token');
        },
      );
    });
    url = await listenOnLoopback(receiver, 'http');
    elsewhere = createServer((req, res) => {
      reachedElsewhere.push({ hook: req.url!.slice(1), authorization: req.headers.authorization });
      req.resume();
      req.on('end', () => res.writeHead(200).end('ok'));
    });
    elsewhereUrl = await listenOnLoopback(elsewhere, 'http');
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await auth?.stop();
    await closeServer(receiver);
    await closeServer(elsewhere);
  });

  const oauth2 = (over: Record<string, unknown> = {}) => ({
    type: 'oauth2_client_credentials',
    tokenUrl,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    scope: 'webhooks:write',
    ...over,
  });
  const register = async (hook: string, authentication: unknown) => {
    const res = await api.post(base, staff.token, { url: `${url}/${hook}`, eventTypes: ['*'], authentication });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; authentication: unknown; signing_secret: string };
  };
  const firstAttempt = (endpointId: string) => firstAttemptOf(api, staff, endpointId);

  it('sends a bearer token from the token endpoint, kept for the next deliveries; the secret is never shown', async () => {
    const before = tokenRequests.length;
    const e = await register('kept', oauth2());
    expect(e.authentication).toEqual({
      type: 'oauth2_client_credentials',
      token_url: tokenUrl,
      client_id: CLIENT_ID,
      scope: 'webhooks:write',
    });
    expect(JSON.stringify(await api.get(`${base}/${e.id}`, staff.token))).not.toContain(CLIENT_SECRET);
    const [row] = await svc.orm.em
      .getConnection()
      .execute<{ s: string }[]>('select authentication_secret_ciphertext as s from webhook_endpoints where id = ?', [
        e.id,
      ]);
    expect(row!.s).toMatch(/^v2:dev:/);
    expect(row!.s).not.toContain(CLIENT_SECRET);

    const first = await firstAttempt(e.id);
    const second = await firstAttempt(e.id);
    expect([first.response_status, second.response_status]).toEqual([200, 200]);
    // The record shows a token went, never the token.
    expect(first.request_headers.authorization).toBe('Bearer [redacted]');
    const mine = got.filter((g) => g.hook === 'kept');
    expect(mine.map((g) => g.verified)).toEqual([true, true]);
    expect(mine[0]!.scope).toBe('webhooks:write');
    expect(mine[1]!.token).toBe(mine[0]!.token); // kept, not fetched again
    expect(tokenRequests.slice(before)).toEqual([
      { grant: 'client_credentials', scope: 'webhooks:write', status: 200 },
    ]);
  });

  it('fetches a new token once the receiver answers 401 to the kept one, and sends again', async () => {
    const e = await register('refresh', oauth2());
    expect((await firstAttempt(e.id)).response_status).toBe(200);
    const before = tokenRequests.length;
    revoked.add(got.filter((g) => g.hook === 'refresh')[0]!.token);
    const attempt = await firstAttempt(e.id);
    expect(attempt).toMatchObject({ response_status: 200, error: null });
    const mine = got.filter((g) => g.hook === 'refresh');
    expect(mine.map((g) => g.verified)).toEqual([true, false, true]);
    expect(mine[2]!.token).not.toBe(mine[1]!.token);
    expect(tokenRequests.length - before).toBe(1);
  });

  it('fetches again shortly before the token expires', async () => {
    expiresIn = 2; // refreshed at 90% of its life
    try {
      const e = await register('short', oauth2());
      const before = tokenRequests.length;
      expect((await firstAttempt(e.id)).response_status).toBe(200);
      await new Promise((r) => setTimeout(r, 2000));
      expect((await firstAttempt(e.id)).response_status).toBe(200);
      const mine = got.filter((g) => g.hook === 'short');
      expect(mine[1]!.token).not.toBe(mine[0]!.token);
      expect(tokenRequests.length - before).toBe(2);
    } finally {
      expiresIn = 3600;
    }
  });

  it('fails the attempt with a clear error when the token endpoint refuses our client, or the receiver every token', async () => {
    const e = await register('wrong-secret', oauth2({ clientSecret: 'not-the-secret' }));
    const refused = await firstAttempt(e.id);
    expect(refused).toMatchObject({ response_status: null, request_headers: null });
    expect(refused.error).toBe(
      'OAUTH2_TOKEN_FAILED: the token endpoint answered 401: invalid_client (client authentication failed)',
    );
    expect(got.some((g) => g.hook === 'wrong-secret')).toBe(false);

    // The receiver wants a scope this client is not given: a fresh token is refused again.
    const strict = await register('strict', oauth2());
    const rejected = await firstAttempt(strict.id);
    expect(rejected.response_status).toBe(401);
    expect(rejected.error).toMatch(/^OAUTH2_TOKEN_REJECTED: /);
    expect(got.filter((g) => g.hook === 'strict')).toHaveLength(2);

    // PATCH fixes it (the whole authentication, secret included) or removes it.
    const fixed = await api.patch(`${base}/${e.id}`, staff.token, { authentication: oauth2() });
    expect(fixed.status).toBe(200);
    expect((await firstAttempt(e.id)).response_status).toBe(200);
    const removed = await api.patch(`${base}/${e.id}`, staff.token, { authentication: null });
    expect(removed.body.data.authentication).toBeNull();
    const bare = await firstAttempt(e.id);
    expect(bare.response_status).toBe(401);
    expect(bare.request_headers.authorization).toBeUndefined();
  });

  it('never sends a token to another origin: moving the url there asks for the authentication again', async () => {
    const e = await register('moving', oauth2());
    expect((await firstAttempt(e.id)).response_status).toBe(200);
    const tokensBefore = tokenRequests.length;
    // Whoever may PATCH the url alone (any staff member) points the endpoint at a host of their own.
    const moved = await api.patch(`${base}/${e.id}`, staff.token, { url: `${elsewhereUrl}/moving` });
    const next = await firstAttempt(e.id);
    expect(reachedElsewhere.filter((r) => r.authorization !== undefined)).toEqual([]);
    expect({ status: moved.status, code: moved.body.error?.code }).toEqual({
      status: 409,
      code: 'AUTHENTICATION_NOT_CARRIED',
    });
    expect(moved.body.error.message).toBe(
      `The endpoint authenticates to ${new URL(url).origin} with oauth2_client_credentials, which does not follow its url to ` +
        `${new URL(elsewhereUrl).origin}: give authentication again in the same request, or authentication: null to send with the signature alone`,
    );
    expect(moved.body.error.details).toEqual({
      field: 'authentication',
      from_origin: new URL(url).origin,
      to_origin: new URL(elsewhereUrl).origin,
    });
    // Nothing changed: the endpoint still delivers to its receiver, with the token it kept.
    expect(next.response_status).toBe(200);
    expect(got.filter((g) => g.hook === 'moving').map((g) => g.verified)).toEqual([true, true]);
    const same = (await api.get(`${base}/${e.id}`, staff.token)).body.data;
    expect([same.url, same.authentication]).toEqual([`${url}/moving`, e.authentication]);
    // The refusal is audited as the endpoint change is.
    const [audited] = await svc.orm.em
      .getConnection()
      .execute<{ outcome: string; error_code: string }[]>(
        `select outcome, error_code from audit_events where subject_id = ? and action = 'webhook_endpoint.update' order by seq desc limit 1`,
        [e.id],
      );
    expect(audited).toEqual({ outcome: 'refused', error_code: 'AUTHENTICATION_NOT_CARRIED' });

    // Another path at the same origin keeps it.
    const samePlace = await api.patch(`${base}/${e.id}`, staff.token, { url: `${url}/moving-on` });
    expect([samePlace.status, samePlace.body.data.authentication]).toEqual([200, e.authentication]);
    expect((await firstAttempt(e.id)).response_status).toBe(200);
    expect(tokenRequests.length).toBe(tokensBefore);

    // Said plainly, with null: the other origin gets the signature alone.
    const bare = await api.patch(`${base}/${e.id}`, staff.token, {
      url: `${elsewhereUrl}/moving`,
      authentication: null,
    });
    expect([bare.status, bare.body.data.authentication]).toEqual([200, null]);
    expect((await firstAttempt(e.id)).response_status).toBe(200);
    expect(reachedElsewhere.filter((r) => r.hook === 'moving')).toEqual([{ hook: 'moving', authorization: undefined }]);
  });

  it('keeps tokens apart by the origin they were fetched for', async () => {
    // The url changed by some path other than PATCH (an operator's statement, say), the credentials
    // untouched: the token fetched while it pointed at the first origin is not sent to the second.
    const e = await register('origins', oauth2());
    expect((await firstAttempt(e.id)).response_status).toBe(200);
    const first = got.filter((g) => g.hook === 'origins')[0]!.token;
    const before = tokenRequests.length;
    await svc.orm.em
      .getConnection()
      .execute('update webhook_endpoints set url = ? where id = ?', [`${elsewhereUrl}/origins`, e.id]);
    expect((await firstAttempt(e.id)).response_status).toBe(200);
    const sent = reachedElsewhere.filter((r) => r.hook === 'origins');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.authorization).not.toBe(`Bearer ${first}`);
    expect(sent[0]!.authorization).toMatch(/^Bearer ./);
    expect(tokenRequests.length - before).toBe(1);
  });

  it('records why when the token URL is no token endpoint', async () => {
    // A receiver that is no token endpoint: 200 without a token is no token.
    const e = await register('no-token', oauth2({ tokenUrl: `${url}/not-a-token-endpoint` }));
    const attempt = await firstAttempt(e.id);
    expect(attempt.error).toMatch(/^OAUTH2_TOKEN_FAILED: the token endpoint answered 401/);
  });
});
