import { createRemoteJWKSet, jwtVerify } from 'jose';
import { AccessTokens } from '../../identity/access-tokens';
import { actor, approveKyc, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { apiKeyFor, exchange } from './support/identity';
import { TestIssuer } from './support/test-issuer';
import { until } from '../support/wait';

describe('token exchange (spec §4.2, §5)', () => {
  let svc: TestService;
  let idp: TestIssuer;
  let pinned: TestIssuer;
  let silent: TestIssuer;
  let org: string;
  let key: string;

  beforeAll(async () => {
    [idp, pinned, silent] = await Promise.all([TestIssuer.start(), TestIssuer.start(), TestIssuer.start()]);
    silent.hang = true;
    svc = await startService({
      set: 'B',
      env: {
        OIDC_ISSUERS: JSON.stringify([idp.config(), pinned.config({ org_ids: [newOrg()] }), silent.config()]),
        // No cooldown, so a rotated key is fetched at once; a short timeout, so a silent IdP fails fast.
        OIDC_JWKS_COOLDOWN_SECONDS: '0',
        OIDC_JWKS_TIMEOUT_MS: '500',
        EXCHANGE_RATE_LIMIT_PER_KEY: '1000',
        EXCHANGE_RATE_LIMIT_PER_ADDRESS: '1000',
        // A revoked key's tokens are refused once this process's remembered verdict on the key lapses.
        TOKEN_REVOCATION_CACHE_SECONDS: '1',
        // The /dev-idp tests below need it; it is off unless a variable turns it on.
        DEV_IDP_ENABLED: 'true',
      },
    });
    org = newOrg();
    key = await apiKeyFor(svc, org);
  });
  afterAll(async () => {
    await svc.stop();
    await Promise.all([idp.stop(), pinned.stop(), silent.stop()]);
  });

  const expectError = async (reply: Promise<{ status: number; body: any }>, status: number, code: string) => {
    const res = await reply;
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(res.body.success).toBe(false);
  };

  it('turns a valid ID token into an ES256 access token that the published JWKS verifies', async () => {
    const res = await exchange(svc, key, await idp.sign({ sub: 'alice', roles: ['staff'] }));
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      success: true,
      data: { access_token: expect.any(String), token_type: 'Bearer', expires_in: 900 },
    });
    const jwks = createRemoteJWKSet(new URL(`${svc.baseUrl}/identity/.well-known/jwks.json`), {
      timeoutDuration: 5000,
    });
    const { payload, protectedHeader } = await jwtVerify(res.body.data.access_token, jwks, {
      audience: 'tranche-api',
      issuer: 'tranche',
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    expect(payload).toMatchObject({ sub: 'alice', org, roles: ['staff'], kyc_completed: false });
    expect(payload.exp! - payload.iat!).toBe(900);
  });

  it('lets the access token through to /issuance routes', async () => {
    const res = await exchange(svc, key, await idp.sign({ sub: 'bob' }));
    const list = await http(svc.baseUrl).get('/issuance/subscriptions', res.body.data.access_token);
    expect(list.status).toBe(200);
  });

  it('refuses, on /issuance and /notifications, a bearer token not signed by this service', async () => {
    const foreign = await (
      await AccessTokens.create({ ttlSeconds: 900 })
    ).sign({ userId: 'mallory', orgId: org, roles: ['admin'], kycCompleted: true });
    const idToken = await idp.sign({ sub: 'mallory', roles: ['admin'] });
    for (const bearer of [foreign, idToken]) {
      for (const path of ['/issuance/subscriptions', '/notifications/event-types']) {
        await expectError(http(svc.baseUrl).get(path, bearer), 401, 'INVALID_TOKEN');
      }
    }
  });

  it('keeps only the service roles from the roles claim, and makes a user without any an investor', async () => {
    const decode = (t: string) => JSON.parse(Buffer.from(t.split('.')[1]!, 'base64url').toString());
    const mixed = await exchange(svc, key, await idp.sign({ roles: ['admin', 'root', 'staff'] }));
    expect(decode(mixed.body.data.access_token).roles).toEqual(['staff', 'admin']);
    const none = await exchange(svc, key, await idp.sign({ roles: 'admin' }));
    expect(decode(none.body.data.access_token).roles).toEqual(['investor']);
  });

  it('sets kyc_completed from the organisation-scoped KYC record at exchange time (Set B)', async () => {
    const decode = (t: string) => JSON.parse(Buffer.from(t.split('.')[1]!, 'base64url').toString());
    const before = await exchange(svc, key, await idp.sign({ sub: 'carol' }));
    expect(decode(before.body.data.access_token).kyc_completed).toBe(false);
    await approveKyc(svc, { userId: 'carol', orgId: org, token: '' });
    const after = await exchange(svc, key, await idp.sign({ sub: 'carol' }));
    expect(decode(after.body.data.access_token).kyc_completed).toBe(true);
    // Approved in this organisation only.
    const elsewhere = await exchange(svc, await apiKeyFor(svc, newOrg()), await idp.sign({ sub: 'carol' }));
    expect(decode(elsewhere.body.data.access_token).kyc_completed).toBe(false);
  });

  describe('refuses the API key', () => {
    it('when it is missing', async () =>
      expectError(exchange(svc, undefined, await idp.sign()), 401, 'API_KEY_MISSING'));
    it('when it is malformed', async () =>
      expectError(exchange(svc, 'service_ak_nope', await idp.sign()), 401, 'API_KEY_MALFORMED'));
    it('when it is unknown', async () =>
      expectError(exchange(svc, `service_ak_${org}_${'ab'.repeat(32)}`, await idp.sign()), 401, 'API_KEY_UNKNOWN'));
    it('when its organisation segment was changed', async () =>
      expectError(exchange(svc, key.replace(org, newOrg()), await idp.sign()), 401, 'API_KEY_ORG_MISMATCH'));
    it('before looking at the body', async () =>
      expectError(exchange(svc, undefined, undefined), 401, 'API_KEY_MISSING'));
  });

  describe('refuses the ID token', () => {
    it('when it has expired', async () =>
      expectError(exchange(svc, key, await idp.sign({ expiresIn: -120 })), 401, 'ID_TOKEN_EXPIRED'));
    it('when it is not valid yet (nbf)', async () =>
      expectError(exchange(svc, key, await idp.sign({ notBefore: 600 })), 401, 'ID_TOKEN_NOT_YET_VALID'));
    it('when it is unsigned (alg none)', async () =>
      expectError(exchange(svc, key, idp.unsigned()), 401, 'ID_TOKEN_UNSIGNED'));
    it('when it is signed by a key the issuer does not publish', async () =>
      expectError(exchange(svc, key, await idp.sign({ foreignKey: true })), 401, 'ID_TOKEN_SIGNATURE_INVALID'));
    it('when it is signed with a shared secret (HS256)', async () =>
      expectError(exchange(svc, key, await idp.symmetric()), 401, 'ID_TOKEN_ALGORITHM_NOT_ALLOWED'));
    it('when it was issued for another audience', async () =>
      expectError(exchange(svc, key, await idp.sign({ audience: 'someone-else' })), 401, 'ID_TOKEN_AUDIENCE_MISMATCH'));
    it('when its issuer is not trusted', async () =>
      expectError(
        exchange(svc, key, await idp.sign({ issuer: 'https://evil.example' })),
        401,
        'ID_TOKEN_ISSUER_UNTRUSTED',
      ));
    it('when it is not a JWT at all', async () =>
      expectError(exchange(svc, key, 'not-a-jwt'), 401, 'ID_TOKEN_MALFORMED'));
    it('when the body has no token', async () => expectError(exchange(svc, key, undefined), 422, 'VALIDATION_FAILED'));
    it('when it names another organisation than the API key', async () =>
      expectError(exchange(svc, key, await idp.sign({ orgId: newOrg() })), 403, 'ID_TOKEN_ORG_MISMATCH'));
    it('when its issuer is pinned to other organisations', async () =>
      expectError(exchange(svc, key, await pinned.sign()), 403, 'ISSUER_NOT_ALLOWED_FOR_ORG'));
  });

  it('answers 503 within the JWKS timeout when the issuer does not answer', async () => {
    const started = Date.now();
    await expectError(exchange(svc, key, await silent.sign()), 503, 'UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(silent.jwksRequests).toBeGreaterThan(0);
  });

  it("follows the issuer's key rotation: the new key is fetched, the old one stops working", async () => {
    const oldToken = await idp.sign({ sub: 'dave' });
    expect((await exchange(svc, key, oldToken)).status).toBe(200);
    const fetchesBefore = idp.jwksRequests;
    await idp.rotate();
    const res = await exchange(svc, key, await idp.sign({ sub: 'dave' }));
    expect(res.status).toBe(200);
    expect(idp.jwksRequests).toBeGreaterThan(fetchesBefore);
    await expectError(exchange(svc, key, oldToken), 401, 'ID_TOKEN_SIGNATURE_INVALID');
  });

  it('caches the JWKS between exchanges', async () => {
    await exchange(svc, key, await idp.sign());
    const fetches = idp.jwksRequests;
    for (let i = 0; i < 3; i++) expect((await exchange(svc, key, await idp.sign())).status).toBe(200);
    expect(idp.jwksRequests).toBe(fetches);
  });

  describe('API keys, managed by an administrator', () => {
    it('creates a key shown once, lists it without the secret, and refuses it once revoked', async () => {
      const o = newOrg();
      const admin = await actor(svc, o, ['admin']);
      const api = http(svc.baseUrl);
      const created = await api.post('/identity/api-keys', admin.token, { name: 'backend' });
      expect(created.status).toBe(201);
      const newKey: string = created.body.data.key;
      expect(newKey).toMatch(new RegExp(`^service_ak_${o}_[0-9a-f]{64}$`));
      expect(created.body.data).toMatchObject({
        name: 'backend',
        org_id: o,
        last_four: newKey.slice(-4),
        revoked_at: null,
      });
      expect((await exchange(svc, newKey, await idp.sign())).status).toBe(200);

      const list = await api.get('/identity/api-keys', admin.token);
      expect(list.body.data).toHaveLength(1);
      expect(JSON.stringify(list.body.data)).not.toContain(newKey.slice(-64));
      expect(list.body.data[0].last_used_at).not.toBeNull();
      const [stored] = await svc.orm.em
        .getConnection()
        .execute('select secret_hash from identity_api_keys where id = ?', [created.body.data.id]);
      expect(stored!.secret_hash).not.toContain(newKey.slice(-64));

      expect((await api.delete(`/identity/api-keys/${created.body.data.id}`, admin.token)).status).toBe(204);
      await expectError(exchange(svc, newKey, await idp.sign()), 401, 'API_KEY_REVOKED');
    });

    it('stops the access tokens exchanged with a key once the key is revoked', async () => {
      const o = newOrg();
      const admin = await actor(svc, o, ['admin']);
      const api = http(svc.baseUrl);
      const created = await api.post('/identity/api-keys', admin.token, { name: 'leaky backend' });
      const exchanged = await exchange(
        svc,
        created.body.data.key,
        await idp.sign({ sub: 'carol', roles: ['investor'] }),
      );
      const token: string = exchanged.body.data.access_token;
      expect((await api.get('/issuance/subscriptions', token)).status).toBe(200);

      expect((await api.delete(`/identity/api-keys/${created.body.data.id}`, admin.token)).status).toBe(204);
      // TOKEN_REVOCATION_CACHE_SECONDS is 1 here: within 1.5 s every API instance has looked again.
      await until(
        "the revoked key's token refused",
        async () => (await api.get('/issuance/subscriptions', token)).status === 401,
        { timeoutMs: 1500 },
      );
      for (const path of ['/issuance/subscriptions', '/notifications/event-types'])
        await expectError(api.get(path, token), 401, 'TOKEN_REVOKED');
      // Tokens exchanged with the organisation's other keys are unaffected.
      expect(
        (await api.get('/issuance/subscriptions', (await exchange(svc, key, await idp.sign())).body.data.access_token))
          .status,
      ).toBe(200);
    });

    it("is for administrators of the key's organisation only", async () => {
      const o = newOrg();
      const admin = await actor(svc, o, ['admin']);
      const created = await http(svc.baseUrl).post('/identity/api-keys', admin.token, { name: 'k' });
      const staff = await actor(svc, o, ['staff']);
      await expectError(http(svc.baseUrl).post('/identity/api-keys', staff.token, { name: 'k' }), 403, 'ROLE_REQUIRED');
      const otherAdmin = await actor(svc, newOrg(), ['admin']);
      await expectError(
        http(svc.baseUrl).delete(`/identity/api-keys/${created.body.data.id}`, otherAdmin.token),
        404,
        'NOT_FOUND',
      );
      expect((await http(svc.baseUrl).get('/identity/api-keys', otherAdmin.token)).body.data).toEqual([]);
    });
  });

  describe('the development identity provider', () => {
    it('publishes discovery and a JWKS, and mints an ID token and API key the real exchange accepts', async () => {
      const api = http(svc.baseUrl);
      const discovery = await api.get('/dev-idp/.well-known/openid-configuration');
      expect(discovery.body.jwks_uri).toBe(`${discovery.body.issuer}/jwks.json`);
      expect((await api.get('/dev-idp/jwks.json')).body.keys).toHaveLength(1);
      const o = newOrg();
      const minted = await api.post('/dev-idp/mint', undefined, { user_id: 'newcomer', org_id: o, roles: ['admin'] });
      expect(minted.status).toBe(200);
      const res = await exchange(svc, minted.body.data.api_key, minted.body.data.id_token);
      expect(res.status).toBe(200);
      expect((await api.get('/identity/api-keys', res.body.data.access_token)).status).toBe(200);
    });
  });
});
