import { createCipheriv, createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { AccessTokens } from '../../identity/access-tokens';
import { secretBoxFrom } from '../../webhooks/secret-box';
import { authenticationAad } from '../../webhooks/authentication';
import { headersAad } from '../../webhooks/custom-headers';
import { loadConfig } from '../../lib/runtime/config';
import { resealWebhookSecrets } from '../../scripts/webhook-secrets';
import { personalKeys, rewrapPersonalKeys } from '../../db/personal-keys';
import { openValue } from '../../lib/personal-data';
import { approveKyc } from '../support/fixtures';
import { lifecycleWorld } from '../support/subscriptions';
import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';

const pem = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const key = () => randomBytes(32).toString('base64');
const principal = {
  userId: 'u-1',
  orgId: '00000000-0000-4000-8000-000000000001',
  roles: ['investor' as const],
  kycCompleted: true,
};

/**
 * Both keys of the service roll without a flag day (docs/decisions/0137-access-token-key-rotation.md,
 * docs/decisions/0138-webhook-secret-keyring.md).
 */
describe('access-token signing key rotation', () => {
  it('publishes the next key before it signs, then keeps the previous one until its tokens expire', async () => {
    const [oldKey, newKey] = [pem(), pem()];
    // Step 1: old signs, new is published ahead.
    const before = await AccessTokens.create({ privateKeyPem: oldKey, publishedKeysPem: newKey, ttlSeconds: 900 });
    expect(before.jwks().keys).toHaveLength(2);
    const issuedBefore = await before.sign(principal);
    // Step 2: new signs, old stays published; tokens from both steps verify on either instance.
    const after = await AccessTokens.create({ privateKeyPem: newKey, publishedKeysPem: oldKey, ttlSeconds: 900 });
    expect(
      after
        .jwks()
        .keys.map((k) => k.kid)
        .sort(),
    ).toEqual(
      before
        .jwks()
        .keys.map((k) => k.kid)
        .sort(),
    );
    const issuedAfter = await after.sign(principal);
    await expect(after.verify(issuedBefore)).resolves.toMatchObject({ userId: 'u-1' });
    await expect(before.verify(issuedAfter)).resolves.toMatchObject({ userId: 'u-1' });
    // Step 3: old key retired; its tokens are refused.
    const retired = await AccessTokens.create({ privateKeyPem: newKey, ttlSeconds: 900 });
    expect(retired.jwks().keys).toHaveLength(1);
    await expect(retired.verify(issuedAfter)).resolves.toMatchObject({ userId: 'u-1' });
    await expect(retired.verify(issuedBefore)).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('serves the JWKS of the running service with two keys, signing key first', async () => {
    const svc = await startService({ set: 'A' });
    try {
      const res = await http(svc.baseUrl).get('/identity/.well-known/jwks.json');
      expect(res.status).toBe(200);
      expect(res.body.keys).toHaveLength(2);
      expect(res.body.keys[0].kid).not.toBe(res.body.keys[1].kid);
      expect(res.body).toEqual(svc.tokens.jwks());
      const { protectedHeader } = decodeHeader(await svc.tokens.sign(principal));
      expect(protectedHeader.kid).toBe(res.body.keys[0].kid);
    } finally {
      await svc.stop();
    }
  });
});

const decodeHeader = (jwt: string) => ({
  protectedHeader: JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as { kid: string },
});

describe('webhook secret-sealing keyring', () => {
  const config = (env: Record<string, string>) =>
    loadConfig({
      DATABASE_URL: 'postgres://x@127.0.0.1/x',
      NODE_ENV: 'production',
      ACCESS_TOKEN_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----',
      SANDBOX_NOTIFICATION_SECRET: 's'.repeat(64),
      TEMPORAL_PAYLOAD_KEYS: `k1:${Buffer.alloc(32, 2).toString('base64')}`,
      AUDIT_HMAC_KEYS: `a1:${Buffer.alloc(32, 3).toString('base64')}`,
      PERSONAL_DATA_KEYS: `p1:${Buffer.alloc(32, 4).toString('base64')}`,
      PAYMENTS_SANDBOX_IN_PRODUCTION: 'true',
      ...env,
    });

  it('seals under the first key with its id, and still opens values sealed under an older key', () => {
    const [k1, k2] = [key(), key()];
    const before = secretBoxFrom(config({ WEBHOOK_SECRET_KEYS: `k1:${k1}` }));
    const sealedBefore = before.seal('ep-1', 'whsec_old');
    expect(sealedBefore.startsWith('v2:k1:')).toBe(true);
    const rotated = secretBoxFrom(config({ WEBHOOK_SECRET_KEYS: `k2:${k2},k1:${k1}` }));
    expect(rotated.open('ep-1', sealedBefore)).toBe('whsec_old');
    expect(rotated.seal('ep-1', 'whsec_new').startsWith('v2:k2:')).toBe(true);
    // Without the old key, the value names the missing key instead of failing obscurely.
    const withoutOld = secretBoxFrom(config({ WEBHOOK_SECRET_KEYS: `k2:${k2}` }));
    expect(() => withoutOld.open('ep-1', sealedBefore)).toThrow(/key "k1"/);
  });

  it('opens values sealed before the keyring existed (v1, under WEBHOOK_SECRET_KEY)', () => {
    const legacy = key();
    // The v1 layout as stored before: v1:<iv>:<tag>:<ciphertext>, AES-256-GCM, endpoint id as AAD.
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', Buffer.from(legacy, 'base64'), iv).setAAD(Buffer.from('ep-9'));
    const ct = Buffer.concat([cipher.update('whsec_legacy', 'utf8'), cipher.final()]);
    const v1 = ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), ct.toString('base64')].join(':');
    const box = secretBoxFrom(config({ WEBHOOK_SECRET_KEYS: `k2:${key()}`, WEBHOOK_SECRET_KEY: legacy }));
    expect(box.open('ep-9', v1)).toBe('whsec_legacy');
    expect(box.currentKeyId).toBe('k2');
  });

  it('refuses a malformed keyring at start, naming the variable', () => {
    expect(() => config({ WEBHOOK_SECRET_KEYS: 'k1:c2hvcnQ=' })).toThrow(/WEBHOOK_SECRET_KEYS/);
    expect(() => config({ WEBHOOK_SECRET_KEYS: `k1:${key()},k1:${key()}` })).toThrow(/WEBHOOK_SECRET_KEYS/);
  });

  describe('resealing stored secrets', () => {
    let svc: TestService;
    const [k1, k2] = [key(), key()];
    beforeAll(async () => {
      svc = await startService({ set: 'A', env: { WEBHOOK_SECRET_KEYS: `k1:${k1}` } });
    }, 120_000);
    afterAll(() => svc?.stop());

    /** The service's box with these keys of the ring, the first sealing: `k2, k1` mid-rotation, `k2` after it. */
    const box = (...ids: ('k1' | 'k2')[]) =>
      secretBoxFrom({
        ...svc.config,
        WEBHOOK_SECRET_KEYS: ids.map((id) => ({ id, key: Buffer.from(id === 'k1' ? k1 : k2, 'base64') })),
      });
    /** One sealed column of an endpoint's row, as `s`. */
    const sealedColumn = async (column: string, endpointId: string) => {
      const [row] = await svc.orm.em
        .getConnection()
        .execute<{ id: string; s: string }[]>(`select id, ${column} as s from webhook_endpoints where id = ?`, [
          endpointId,
        ]);
      return row!;
    };

    it('re-seals every endpoint under the new key, so the old key can leave the ring', async () => {
      const staff = await actor(svc, newOrg(), ['staff', 'admin']);
      const created = await http(svc.baseUrl).post('/notifications/webhook-endpoints', staff.token, {
        url: 'https://hooks.example.com/r',
        description: '',
        eventTypes: ['*'],
      });
      expect(created.status).toBe(201);
      const secret: string = created.body.data.signing_secret;
      const rotated = box('k2', 'k1');
      expect(await resealWebhookSecrets(svc.orm, rotated)).toMatchObject({ resealed: expect.any(Number) });
      const row = await sealedColumn('secret_ciphertext', created.body.data.id);
      expect(row.s.startsWith('v2:k2:')).toBe(true);
      expect(createHash('sha256').update(box('k2').open(row.id, row.s)).digest('hex')).toBe(
        createHash('sha256').update(secret).digest('hex'),
      );
      expect(await resealWebhookSecrets(svc.orm, rotated)).toMatchObject({ resealed: 0, current: expect.any(Number) });
    });

    it('re-seals the secret a rotation replaced too, so it still signs during the overlap after the old key left', async () => {
      const staff = await actor(svc, newOrg(), ['staff', 'admin']);
      const api = http(svc.baseUrl);
      const created = await api.post('/notifications/webhook-endpoints', staff.token, {
        url: 'https://hooks.example.com/p',
        description: '',
        eventTypes: ['*'],
      });
      const replaced: string = created.body.data.signing_secret;
      expect(
        (await api.post(`/notifications/webhook-endpoints/${created.body.data.id}/rotate-secret`, staff.token)).status,
      ).toBe(200);
      await resealWebhookSecrets(svc.orm, box('k2', 'k1'));
      const row = await sealedColumn('previous_secret_ciphertext', created.body.data.id);
      expect(row.s.startsWith('v2:k2:')).toBe(true);
      expect(box('k2').open(row.id, row.s) === replaced).toBe(true);
    });

    it('re-seals the kept Idempotency-Key answers and body digests in the same box, so they replay after the old key left', async () => {
      const staff = await actor(svc, newOrg(), ['staff', 'admin']);
      const k = `key-${randomBytes(8).toString('hex')}`;
      const created = await http(svc.baseUrl).post(
        '/notifications/webhook-endpoints',
        staff.token,
        { url: 'https://hooks.example.com/kept', eventTypes: ['*'] },
        { 'idempotency-key': k },
      );
      expect(created.status).toBe(201);
      const rotated = box('k2', 'k1');
      await resealWebhookSecrets(svc.orm, rotated);
      const [row] = await svc.orm.em
        .getConnection()
        .execute<
          { principal: string; method: string; path: string; key: string; request_hash: string; body_sealed: string }[]
        >('select principal, method, path, key, request_hash, body_sealed from idempotency_keys where key = ?', [k]);
      expect([row!.request_hash.slice(0, 6), row!.body_sealed.slice(0, 6)]).toEqual(['v2:k2:', 'v2:k2:']);
      const onlyNew = box('k2');
      const scopeId = createHash('sha256')
        .update(JSON.stringify({ principal: row!.principal, method: row!.method, path: row!.path, key: row!.key }))
        .digest('hex');
      const kept = JSON.parse(onlyNew.open(scopeId, row!.body_sealed));
      expect(kept.data.signing_secret === created.body.data.signing_secret).toBe(true);
      expect(onlyNew.open(`${scopeId}:request`, row!.request_hash)).toMatch(/^[0-9a-f]{64}$/);
      expect((await resealWebhookSecrets(svc.orm, rotated)).answers.resealed).toBe(0);
    });

    const clientSecret = 'reseal-client-secret-0123456789';
    const apiKey = 'reseal-gateway-key-0123456789';
    it.each([
      {
        what: 'OAuth2 client secret',
        whose: 'its',
        fields: {
          url: 'https://hooks.example.com/oauth',
          authentication: {
            type: 'oauth2_client_credentials',
            tokenUrl: 'https://93.184.215.14/token',
            clientId: 'reseal',
            clientSecret,
          },
        },
        column: 'authentication_secret_ciphertext',
        aad: authenticationAad,
        opened: (plain: string) => expect(plain === clientSecret).toBe(true),
      },
      {
        what: 'secret header values',
        whose: 'their',
        fields: { url: 'https://hooks.example.com/headers', headers: { 'X-Api-Key': { value: apiKey, secret: true } } },
        column: 'headers_secret_ciphertext',
        aad: headersAad,
        opened: (plain: string) => expect(JSON.parse(plain)).toEqual({ 'X-Api-Key': apiKey }),
      },
    ])(
      're-seals an endpoint’s $what too, under $whose own associated data',
      async ({ fields, column, aad, opened }) => {
        const staff = await actor(svc, newOrg(), ['staff', 'admin']);
        const created = await http(svc.baseUrl).post('/notifications/webhook-endpoints', staff.token, {
          ...fields,
          eventTypes: ['*'],
        });
        expect(created.status).toBe(201);
        await resealWebhookSecrets(svc.orm, box('k2', 'k1'));
        const row = await sealedColumn(column, created.body.data.id);
        expect(row.s.startsWith('v2:k2:')).toBe(true);
        const onlyNew = box('k2');
        opened(onlyNew.open(aad(row.id), row.s));
        // Bound to what it is for: it does not open as the endpoint's signing secret.
        expect(() => onlyNew.open(row.id, row.s)).toThrow();
      },
    );

    it('re-wraps every investor data key under the first of PERSONAL_DATA_KEYS, so an older wrapping key can leave', async () => {
      const w = await lifecycleWorld(svc);
      await approveKyc(svc, w.investor);
      const signed = await w.signed();
      const knex = () => svc.orm.em.getConnection().getKnex();
      const older = svc.config.PERSONAL_DATA_KEYS!;
      const ring = [{ id: 'p2', key: randomBytes(32) }, ...older];
      const before = await knex()('personal_data_keys').count<{ n: string }[]>({ n: '*' });
      const first = await rewrapPersonalKeys(knex(), ring, 2);
      expect(first).toEqual({ rewrapped: Number(before[0]!.n), current: 0 });
      const wrapped: { wrapped_key: string }[] = await knex()('personal_data_keys').select('wrapped_key');
      expect(wrapped.every((r) => r.wrapped_key.startsWith('p2:'))).toBe(true);
      // Without the older key, the investor's sealed signature still opens: the data key itself did not change.
      const [row] = await svc.orm.em
        .getConnection()
        .execute<{ signature: string }[]>(`select state->>'signature' as signature from subscriptions where id = ?`, [
          signed.id,
        ]);
      const onlyNew = personalKeys(knex, [ring[0]!]);
      const id = row!.signature.split(':')[2]!;
      expect(openValue(row!.signature, await onlyNew.open(w.org, [id]))).toBe('Ada Lovelace');
      expect(await rewrapPersonalKeys(knex(), ring, 2)).toEqual({ rewrapped: 0, current: Number(before[0]!.n) });
      // The service itself, still on the older list, cannot open the rewrapped key: the new key goes first before a rewrap.
      await expect(personalKeys(knex, older).open(w.org, [id])).rejects.toThrow(/"p2" is not in PERSONAL_DATA_KEYS/);
    });
  });
});
