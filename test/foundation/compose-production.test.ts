import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../lib/runtime/config';
import { COMPOSE_SECRETS, composeConfig, root, run } from './support/compose';

/** The compose file and the image in production: built, configured, migrated and refused as operators run them. */
describe('deployment shape', () => {
  let compose: any;
  beforeAll(async () => {
    compose = await composeConfig();
  });

  it("names every image by the build, and makes the build's version Current once its workers poll (docs/decisions/0386)", async () => {
    const built = (await composeConfig({ TRANCHE_BUILD_ID: '0.1.0-4a2dfb04e6fb' })).services;
    for (const name of ['migrate', 'temporal-setup', 'api', 'worker', 'worker-version'])
      expect({ name, arg: built[name].build.args.TRANCHE_BUILD_ID }).toEqual({ name, arg: '0.1.0-4a2dfb04e6fb' });
    expect(built.worker.environment.TRANCHE_BUILD_ID).toBe('0.1.0-4a2dfb04e6fb');
    expect(built['worker-version'].command).toEqual(['node', 'dist/scripts/worker-version.js', 'promote']);
    expect(built['worker-version'].depends_on.worker.condition).toBe('service_started');
    expect(readFileSync(join(root, 'Dockerfile'), 'utf8')).toMatch(/^ARG TRANCHE_BUILD_ID=\nRUN npm run build/m);
  });

  it('gives a worker longer to stop than its own grace, itself longer than an attempt', () => {
    const grace = Number(compose.services.worker.environment.WORKER_SHUTDOWN_GRACE_SECONDS);
    expect(grace).toBeGreaterThan(30);
    expect(compose.services.worker.stop_grace_period).toBe('1m0s');
  });

  it('starts a production config from its environment alone', () => {
    const env = {
      ...compose.services.api.environment,
      ACCESS_TOKEN_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----',
      WEBHOOK_SECRET_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
      AUDIT_HMAC_KEYS: `a1:${Buffer.alloc(32, 2).toString('base64')}`,
      PERSONAL_DATA_KEYS: `p1:${Buffer.alloc(32, 4).toString('base64')}`,
      TEMPORAL_PAYLOAD_KEYS: `k1:${Buffer.alloc(32, 2).toString('base64')}`,
      STRIPE_SECRET_KEY: 'sk_live_x',
      STRIPE_WEBHOOK_SECRET: 'whsec_x',
    };
    expect(loadConfig(env)).toMatchObject({ NODE_ENV: 'production', PAYMENT_PROCESSOR: 'stripe' });
  });

  it('runs the payment sandbox only when PAYMENTS_SANDBOX_IN_PRODUCTION says so, with a secret of its own', async () => {
    const parsed = async (extra: Record<string, string>) => (await composeConfig(extra)).services.api.environment;
    const keys = {
      ACCESS_TOKEN_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----',
      WEBHOOK_SECRET_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
      AUDIT_HMAC_KEYS: `a1:${Buffer.alloc(32, 2).toString('base64')}`,
      PERSONAL_DATA_KEYS: `p1:${Buffer.alloc(32, 4).toString('base64')}`,
      TEMPORAL_PAYLOAD_KEYS: `k1:${Buffer.alloc(32, 2).toString('base64')}`,
    };
    const sandbox = { ...(await parsed({ PAYMENT_PROCESSOR: 'sandbox' })), ...keys };
    expect(() => loadConfig(sandbox)).toThrow(/PAYMENT_PROCESSOR: .*PAYMENTS_SANDBOX_IN_PRODUCTION=true/);
    const demo = {
      ...(await parsed({ PAYMENT_PROCESSOR: 'sandbox', PAYMENTS_SANDBOX_IN_PRODUCTION: 'true' })),
      ...keys,
    };
    expect(() => loadConfig(demo)).toThrow(/SANDBOX_NOTIFICATION_SECRET: required in production/);
    expect(loadConfig({ ...demo, SANDBOX_NOTIFICATION_SECRET: 's'.repeat(32) }).PAYMENTS_SANDBOX_IN_PRODUCTION).toBe(
      true,
    );
  });

  it('builds an image that runs in production whatever starts it', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(finalStage).toMatch(/^ENV NODE_ENV=production$/m);
  });

  it('migrates as the owner in a step of its own, and serves as the row-rights role (docs/decisions/0265)', () => {
    const { migrate, api, worker } = compose.services;
    expect(migrate.command).toEqual(['node', 'dist/scripts/migrate.js']);
    expect(new URL(migrate.environment.DATABASE_MIGRATION_URL).username).toBe('tranche');
    for (const service of [api, worker]) {
      expect(new URL(service.environment.DATABASE_URL).username).toBe('tranche_app');
      expect(service.environment.DATABASE_MIGRATION_URL).toBeUndefined();
      expect(service.depends_on.migrate.condition).toBe('service_completed_successfully');
    }
  });

  it.each(Object.keys(COMPOSE_SECRETS))('refuses to parse it without %s', async (name) => {
    const env = { ...process.env, ...COMPOSE_SECRETS, [name]: '' };
    await expect(
      run('docker', ['compose', '-f', 'temporal-compose.yml', 'config', '--quiet'], {
        cwd: root,
        env,
        timeout: 30_000,
      }),
    ).rejects.toThrow(new RegExp(`required variable ${name}`));
  });
});
