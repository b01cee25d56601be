import { createCipheriv, randomBytes } from 'node:crypto';
import { secretBoxFrom } from '../../webhooks/secrets/secret-box';
import { loadConfig } from '../../lib/runtime/config';
import { sealingKey as key } from './support/keyring';

/** The webhook secret-sealing key rolls without a flag day (docs/decisions/0138-webhook-secret-keyring.md). */
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
});
