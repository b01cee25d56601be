import { createHash, randomBytes } from 'node:crypto';
import { secretBoxFrom } from '../../webhooks/secrets/secret-box';
import { authenticationAad } from '../../webhooks/secrets/authentication';
import { headersAad } from '../../webhooks/endpoints/custom-headers';
import { resealWebhookSecrets } from '../../scripts/webhook-secrets';
import { personalKeys, rewrapPersonalKeys } from '../../db/personal-keys';
import { openValue } from '../../lib/personal-data';
import { actor, approveKyc, newOrg } from '../support/fixtures';
import { lifecycleWorld } from '../support/subscriptions';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { sealingKey as key } from './support/keyring';

/**
 * What is stored sealed is sealed again under the keyring's new first key, so the old one can leave
 * (docs/decisions/0138-webhook-secret-keyring.md).
 */
describe('webhook secret-sealing keyring', () => {
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
