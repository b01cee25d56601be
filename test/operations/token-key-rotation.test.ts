import { generateKeyPairSync } from 'node:crypto';
import { AccessTokens } from '../../identity/access-tokens';
import { http } from '../support/http';
import { startService } from '../support/service';

const pem = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const principal = {
  userId: 'u-1',
  orgId: '00000000-0000-4000-8000-000000000001',
  roles: ['investor' as const],
  kycCompleted: true,
};

/** The access-token key rolls without a flag day (docs/decisions/0137-access-token-key-rotation.md). */
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
