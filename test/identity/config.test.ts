import { ConfigError, loadConfig } from '../../lib/runtime/config';
import { embeddedDefaults } from '../../scripts/lib/embedded-defaults';

describe('identity configuration', () => {
  const base = { DATABASE_URL: 'postgres://u:p@localhost:5432/db', NODE_ENV: 'development' };
  const production = {
    ...base,
    NODE_ENV: 'production',
    ACCESS_TOKEN_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----',
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    SANDBOX_NOTIFICATION_SECRET: 's'.repeat(64),
    TEMPORAL_PAYLOAD_KEYS: `k1:${Buffer.alloc(32, 2).toString('base64')}`,
    AUDIT_HMAC_KEYS: `a1:${Buffer.alloc(32, 3).toString('base64')}`,
    PERSONAL_DATA_KEYS: `p1:${Buffer.alloc(32, 4).toString('base64')}`,
  };

  it('leaves the development identity provider off unless a variable turns it on, and never in production', () => {
    // Once, a service started without NODE_ENV minted admin tokens for any organisation.
    expect(loadConfig({ ...base, NODE_ENV: 'development' }).DEV_IDP_ENABLED).toBe(false);
    expect(loadConfig({ ...base, NODE_ENV: 'test' }).DEV_IDP_ENABLED).toBe(false);
    expect(loadConfig({ ...base, DEV_IDP_ENABLED: 'true' }).DEV_IDP_ENABLED).toBe(true);
    // Every broken cross-variable rule is reported at once, so this holds whatever else production needs.
    expect(() => loadConfig({ ...production, DEV_IDP_ENABLED: 'true' })).toThrow(
      /DEV_IDP_ENABLED: the development identity provider cannot run in production/,
    );
  });

  it("turns it on in npm start's embedded default, which an explicit variable still overrides", () => {
    expect(loadConfig({ ...base, ...embeddedDefaults({}) }).DEV_IDP_ENABLED).toBe(true);
    expect(loadConfig({ ...base, ...embeddedDefaults({ DEV_IDP_ENABLED: 'false' }) }).DEV_IDP_ENABLED).toBe(false);
  });

  it('reads OIDC_ISSUERS as a JSON list and names what is wrong with it', () => {
    const issuers = [{ issuer: 'https://id.example', jwks_uri: 'https://id.example/jwks', audience: 'tranche' }];
    expect(loadConfig({ ...base, OIDC_ISSUERS: JSON.stringify(issuers) }).OIDC_ISSUERS).toEqual(issuers);
    expect(loadConfig(base).OIDC_ISSUERS).toEqual([]);
    expect(() => loadConfig({ ...base, OIDC_ISSUERS: '{not json' })).toThrow(/OIDC_ISSUERS: must be JSON/);
    expect(() =>
      loadConfig({ ...base, OIDC_ISSUERS: JSON.stringify([{ issuer: 'https://id.example', audience: 'a' }]) }),
    ).toThrow(ConfigError);
    expect(() =>
      loadConfig({ ...base, OIDC_ISSUERS: JSON.stringify([{ ...issuers[0], jwks_uri: 'ftp://id.example/jwks' }]) }),
    ).toThrow(/jwks_uri/);
  });

  it('refuses a provider notification secret too short to be a secret', () => {
    expect(() => loadConfig({ ...base, IDENTITY_PROVIDER_WEBHOOK_SECRET: 'short' })).toThrow(
      /IDENTITY_PROVIDER_WEBHOOK_SECRET/,
    );
  });
});

/** Production is what a process is unless it opts out (docs/decisions/0259-production-by-default.md). */
describe('production by default', () => {
  const base = { DATABASE_URL: 'postgres://u:p@localhost:5432/db' };
  const secrets = {
    ACCESS_TOKEN_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----',
    WEBHOOK_SECRET_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
    SANDBOX_NOTIFICATION_SECRET: 's'.repeat(64),
    TEMPORAL_PAYLOAD_KEYS: `k1:${Buffer.alloc(32, 2).toString('base64')}`,
    AUDIT_HMAC_KEYS: `a1:${Buffer.alloc(32, 3).toString('base64')}`,
    PERSONAL_DATA_KEYS: `p1:${Buffer.alloc(32, 4).toString('base64')}`,
  };
  const message = (env: NodeJS.ProcessEnv): string => {
    try {
      loadConfig(env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('loadConfig accepted it');
  };

  it('is production when NODE_ENV is unset, and names every missing secret and how to make it, at once', () => {
    const text = message(base);
    expect(text).toMatch(/ACCESS_TOKEN_PRIVATE_KEY: .*openssl genpkey/);
    expect(text).toMatch(/WEBHOOK_SECRET_KEYS: .*openssl rand -base64 32/);
    expect(text).toMatch(/PAYMENT_PROCESSOR: .*PAYMENTS_SANDBOX_IN_PRODUCTION=true/);
    expect(text).toMatch(/NODE_ENV=development/); // the way out, for a machine of one's own
    // A missing DATABASE_URL is named in the same error, not in a first one that hides the rest.
    const all = message({});
    expect(all).toMatch(/DATABASE_URL:/);
    expect(all).toMatch(/ACCESS_TOKEN_PRIVATE_KEY:/);
    expect(all).toMatch(/WEBHOOK_SECRET_KEYS:/);
  });

  it('takes development conveniences only when NODE_ENV names development or test', () => {
    expect(loadConfig({ ...base, NODE_ENV: 'development' }).NODE_ENV).toBe('development');
    expect(loadConfig({ ...base, NODE_ENV: 'test' }).NODE_ENV).toBe('test');
    expect(() => loadConfig({ ...base, NODE_ENV: 'staging' })).toThrow(/NODE_ENV:/);
  });

  it('runs the sandbox processor in production only when PAYMENTS_SANDBOX_IN_PRODUCTION=true says so', () => {
    expect(message({ ...base, ...secrets })).toMatch(/PAYMENT_PROCESSOR: .*sandbox/);
    expect(message({ ...base, ...secrets, PAYMENT_PROCESSOR: 'sandbox' })).toMatch(/PAYMENTS_SANDBOX_IN_PRODUCTION/);
    const sandbox = loadConfig({ ...base, ...secrets, PAYMENTS_SANDBOX_IN_PRODUCTION: 'true' });
    expect([sandbox.PAYMENT_PROCESSOR, sandbox.PAYMENTS_SANDBOX_IN_PRODUCTION]).toEqual(['sandbox', true]);
    const stripe = {
      ...base,
      ...secrets,
      PAYMENT_PROCESSOR: 'stripe',
      STRIPE_SECRET_KEY: 'sk_test_x',
      STRIPE_WEBHOOK_SECRET: 'whsec_x',
    };
    expect(loadConfig(stripe).PAYMENT_PROCESSOR).toBe('stripe');
    // With the flag, the sandbox still needs a notification secret of its own (never the public constant).
    const { SANDBOX_NOTIFICATION_SECRET: _, ...noSandboxSecret } = secrets;
    expect(message({ ...base, ...noSandboxSecret, PAYMENTS_SANDBOX_IN_PRODUCTION: 'true' })).toMatch(
      /SANDBOX_NOTIFICATION_SECRET: .*openssl rand -hex 32/,
    );
  });

  it.each([
    ['IDEMPOTENCY_KEY_TTL_SECONDS', '5'],
    ['RETENTION_EVENTS_SECONDS', '60'],
    ['RETENTION_PAYMENT_NOTIFICATIONS_SECONDS', '60'],
    ['RETENTION_PRUNE_INTERVAL_SECONDS', '30'],
    ['SUBSCRIPTION_DRAFT_TTL_SECONDS', '6'],
    ['COMMITMENT_SWEEP_INTERVAL_SECONDS', '2'],
    ['COMMITMENT_SWEEP_GRACE_SECONDS', '120'],
  ])('refuses the test-only %s in production, and takes it elsewhere', (name, value) => {
    const production = { ...base, ...secrets, PAYMENTS_SANDBOX_IN_PRODUCTION: 'true' };
    expect(message({ ...production, [name]: value })).toMatch(new RegExp(`${name}: .*never in production`));
    expect(() => loadConfig({ ...base, NODE_ENV: 'test', [name]: value })).not.toThrow();
  });

  it('lets unsealed Temporal payloads through only where TEMPORAL_ACCEPT_UNSEALED_PAYLOADS says so, never in production', () => {
    const production = { ...base, ...secrets, PAYMENTS_SANDBOX_IN_PRODUCTION: 'true' };
    expect(loadConfig(production).TEMPORAL_ACCEPT_UNSEALED_PAYLOADS).toBe(false);
    expect(loadConfig({ ...base, NODE_ENV: 'test' }).TEMPORAL_ACCEPT_UNSEALED_PAYLOADS).toBe(false);
    expect(message({ ...production, TEMPORAL_ACCEPT_UNSEALED_PAYLOADS: 'true' })).toMatch(
      /TEMPORAL_ACCEPT_UNSEALED_PAYLOADS: never in production/,
    );
    expect(
      loadConfig({ ...base, NODE_ENV: 'development', TEMPORAL_ACCEPT_UNSEALED_PAYLOADS: 'true' })
        .TEMPORAL_ACCEPT_UNSEALED_PAYLOADS,
    ).toBe(true);
  });

  // A fault test's pause point (lib/runtime/test-pause.ts, docs/decisions/0371-commitment-sweep.md).
  it('takes TEST_PAUSE_AT under NODE_ENV=test only, never in development or production', () => {
    const pause = { TEST_PAUSE_AT: 'capacity-held' };
    const production = { ...base, ...secrets, PAYMENTS_SANDBOX_IN_PRODUCTION: 'true' };
    expect(message({ ...production, ...pause })).toMatch(/TEST_PAUSE_AT: .*only with NODE_ENV=test/);
    expect(message({ ...base, NODE_ENV: 'development', ...pause })).toMatch(/TEST_PAUSE_AT/);
    expect(loadConfig({ ...base, NODE_ENV: 'test', ...pause }).TEST_PAUSE_AT).toBe('capacity-held');
  });

  it('refuses a commitment sweep grace no longer than COMMAND_TIMEOUT_MS', () => {
    const tight = { ...base, NODE_ENV: 'test', COMMAND_TIMEOUT_MS: '10000' };
    expect(message({ ...tight, COMMITMENT_SWEEP_GRACE_SECONDS: '10' })).toMatch(/COMMITMENT_SWEEP_GRACE_MINUTES: /);
    expect(() => loadConfig({ ...tight, COMMITMENT_SWEEP_GRACE_SECONDS: '11' })).not.toThrow();
  });
});
