import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { exchange } from './support/identity';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const npm = (args: string[], env: Record<string, string> = {}) =>
  run('npm', ['run', '-s', ...args], { cwd: root, env: { ...process.env, ...env }, timeout: 60_000 });

/** The documented commands, run exactly as a newcomer runs them, against a running service. */
describe('identity commands', () => {
  let svc: TestService;
  beforeAll(async () => (svc = await startService({ set: 'A', env: { DEV_IDP_ENABLED: 'true' } })));
  afterAll(() => svc.stop());

  it('`npm run mint` prints an access token for the given user, organisation and role', async () => {
    const org = newOrg();
    const { stdout } = await npm([
      'mint',
      '--',
      '--url',
      svc.baseUrl,
      '--user',
      'newcomer',
      '--org',
      org,
      '--role',
      'staff',
    ]);
    const token = stdout.trim();
    expect(token.split('.')).toHaveLength(3);
    expect(await svc.tokens.verify(token)).toEqual({
      userId: 'newcomer',
      orgId: org,
      roles: ['staff'],
      kycCompleted: false,
      // The token names the API key it was exchanged with (the audit trail's actor).
      apiKeyId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect((await http(svc.baseUrl).post('/issuance/offerings', token, { name: 'Seed', currency: 'USD' })).status).toBe(
      201,
    );
  });

  it('`npm run api-key` creates a working key in the database and revokes it', async () => {
    const org = newOrg();
    const env = { DATABASE_URL: svc.config.DATABASE_URL, LOG_LEVEL: 'silent' };
    const key = (await npm(['api-key', '--', 'create', '--org', org, '--name', 'backend'], env)).stdout.trim();
    expect(key).toMatch(new RegExp(`^service_ak_${org}_[0-9a-f]{64}$`));
    const idToken = async () =>
      (
        await http(svc.baseUrl).post('/dev-idp/mint', undefined, {
          user_id: 'u',
          org_id: org,
          roles: ['investor'],
          api_key: false,
        })
      ).body.data.id_token;
    expect((await exchange(svc, key, await idToken())).status).toBe(200);

    const [listed] = JSON.parse((await npm(['api-key', '--', 'list', '--org', org], env)).stdout);
    expect(listed).toMatchObject({ name: 'backend', org_id: org, revoked_at: null });
    await npm(['api-key', '--', 'revoke', '--org', org, '--id', listed.id], env);
    expect((await exchange(svc, key, await idToken())).body.error.code).toBe('API_KEY_REVOKED');
  });
});
