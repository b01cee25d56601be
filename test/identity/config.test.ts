import { ConfigError, loadConfig } from '../../lib/config';
import { embeddedDefaults } from '../../scripts/lib/embedded-defaults';

describe('identity configuration', () => {
  const base = { DATABASE_URL: 'postgres://u:p@localhost:5432/db' };
  const production = {
    ...base,
    NODE_ENV: 'production',
    ACCESS_TOKEN_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----',
    WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
    SANDBOX_NOTIFICATION_SECRET: 's'.repeat(64),
    TEMPORAL_PAYLOAD_KEYS: `k1:${Buffer.alloc(32, 2).toString('base64')}`,
  };

  it('leaves the development identity provider off unless a variable turns it on, and never in production', () => {
    // Issue 10: a service started without NODE_ENV minted admin tokens for any organisation.
    expect(loadConfig(base).DEV_IDP_ENABLED).toBe(false);
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
