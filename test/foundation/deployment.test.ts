import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ConfigError, loadConfig } from '../../lib/config';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

describe('deployment shape', () => {
  const secrets = { TRANCHE_DB_PASSWORD: 'p', TEMPORAL_DB_PASSWORD: 'p', ACCESS_TOKEN_PRIVATE_KEY: 'k', WEBHOOK_SECRET_KEY: 'w' };

  it('parses temporal-compose.yml with docker compose, with a worker service to scale', async () => {
    const env = { ...process.env, ...secrets };
    const { stdout } = await run('docker', ['compose', '-f', 'temporal-compose.yml', 'config', '--format', 'json'], { cwd: root, env, timeout: 30_000 });
    const config = JSON.parse(stdout);
    expect(Object.keys(config.services).sort()).toEqual(['api', 'temporal', 'temporal-admin', 'temporal-db', 'temporal-ui', 'tranche-db', 'worker']);
    expect(config.services.worker.deploy.replicas).toBe(2);
    expect(config.services.worker.environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it.each(['TRANCHE_DB_PASSWORD', 'TEMPORAL_DB_PASSWORD', 'ACCESS_TOKEN_PRIVATE_KEY', 'WEBHOOK_SECRET_KEY'])(
    'refuses to parse it without %s',
    async (name) => {
      const env = { ...process.env, ...secrets, [name]: '' };
      await expect(run('docker', ['compose', '-f', 'temporal-compose.yml', 'config', '--quiet'], { cwd: root, env, timeout: 30_000 })).rejects.toThrow(new RegExp(`required variable ${name}`));
    },
  );
});

describe('configuration', () => {
  const valid = { DATABASE_URL: 'postgres://u:p@localhost:5432/db' };

  it('applies the documented defaults', () => {
    const config = loadConfig(valid);
    expect(config).toMatchObject({ PORT: 3000, BEHAVIOUR_SET: 'A', TEMPORAL_ADDRESS: 'localhost:7233', TEMPORAL_NAMESPACE: 'default', TEMPORAL_TASK_QUEUE: 'tranche' });
  });

  it.each([
    ['BEHAVIOUR_SET', 'C'],
    ['PORT', 'eighty'],
    ['DATABASE_URL', 'mysql://localhost/db'],
  ])('fails at start with a message naming %s when it is %p', (name, value) => {
    expect(() => loadConfig({ ...valid, [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...valid, [name]: value })).toThrow(new RegExp(`${name}:`));
  });

  it('requires DATABASE_URL', () => {
    expect(() => loadConfig({})).toThrow(/DATABASE_URL:/);
  });

  it('requires an access-token signing key in production', () => {
    expect(() => loadConfig({ ...valid, NODE_ENV: 'production' })).toThrow(/ACCESS_TOKEN_PRIVATE_KEY/);
  });
});
