import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ConfigError, ConfigSchema, loadConfig } from '../../lib/runtime/config';
import { SCHEMA_STEPS, TEMPORAL_CONFIG_DIR, TEMPORAL_CONFIG_ENV } from '../../scripts/lib/temporal-server';
import { toolPath } from '../support/tools';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

const toolVersion = (name: string) =>
  new RegExp(`^${name}=(\\S+)`, 'm').exec(readFileSync(join(root, 'scripts', 'tools.sh'), 'utf8'))![1];

describe('deployment shape', () => {
  const secrets = {
    TRANCHE_DB_PASSWORD: 'p',
    TRANCHE_APP_DB_PASSWORD: 'a',
    AUDIT_HMAC_KEYS: 'h',
    PERSONAL_DATA_KEYS: 'pd',
    TEMPORAL_DB_PASSWORD: 'p',
    ACCESS_TOKEN_PRIVATE_KEY: 'k',
    WEBHOOK_SECRET_KEYS: 'w',
    TEMPORAL_PAYLOAD_KEYS: 't',
    PAYMENT_PROCESSOR: 'stripe',
  };
  let compose: any;
  beforeAll(async () => {
    const { stdout } = await run('docker', ['compose', '-f', 'temporal-compose.yml', 'config', '--format', 'json'], {
      cwd: root,
      env: { ...process.env, ...secrets },
      timeout: 30_000,
    });
    compose = JSON.parse(stdout);
  });

  it('parses temporal-compose.yml with docker compose, with a worker service to scale', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'api',
      'gateway',
      'migrate',
      'temporal',
      'temporal-db',
      'temporal-schema',
      'temporal-setup',
      'temporal-ui',
      'tranche-db',
      'worker',
      'worker-version',
    ]);
    expect(compose.services.worker.deploy.replicas).toBe(2);
    expect(compose.services.worker.environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('runs two API replicas behind one gateway port, trusting exactly that hop', () => {
    const { api, gateway } = compose.services;
    expect(api.deploy.replicas).toBe(2);
    expect(api.ports ?? []).toEqual([]); // replicas share no host port; only the gateway publishes
    expect(gateway.ports.map((p: { published: string; target: number }) => [p.published, p.target])).toEqual([
      ['3000', 3000],
    ]);
    expect([api.environment.TRUST_PROXY, api.environment.TRUST_PROXY_HOPS]).toEqual(['true', '1']);
    expect(gateway.image).toBe(`caddy:${toolVersion('CADDY_VERSION')}`);
    const caddyfile = readFileSync(gatewayConfig(), 'utf8');
    expect(caddyfile).toMatch(/dynamic a \{\s*name api\s*port 3000/);
    // Only the proxies in TRUSTED_PROXIES (none by default) are believed; a client's own X-Forwarded-For is replaced.
    expect(caddyfile.match(/trusted_proxies.*/g)).toEqual(['trusted_proxies static {$TRUSTED_PROXIES}']);
    expect(gateway.environment.TRUSTED_PROXIES).toBe(''); // compose's default: none
  });

  it("gives the API the gateway's network and the balancers before it as its trusted proxies", async () => {
    // Behind the gateway, which appends its peer (a balancer, or the client), the API must trust the gateway's
    // address or every client is the gateway, one address and one rate limit (docs/decisions/0273).
    const covers = (list: string, address: string) => {
      const ranges: string[] = ConfigSchema.shape.TRUSTED_PROXIES.parse(list);
      const block = new BlockList();
      for (const range of ranges) {
        const [net, bits] = range.split('/');
        if (bits === undefined) block.addAddress(net!, isIP(net!) === 6 ? 'ipv6' : 'ipv4');
        else block.addSubnet(net!, Number(bits), isIP(net!) === 6 ? 'ipv6' : 'ipv4');
      }
      return block.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
    };
    const { api, gateway } = compose.services;
    expect(api.environment.TRUSTED_PROXIES ?? 'unset').toMatch(/^\S+\/\d+/);
    const networks = Object.keys(gateway.networks ?? { default: null });
    expect(networks).toEqual(['default']);
    expect(Object.keys(api.networks ?? { default: null })).toEqual(['default']);
    const subnets: string[] = (compose.networks?.default?.ipam?.config ?? []).map((c: { subnet: string }) => c.subnet);
    expect(subnets).toHaveLength(1);
    // Every address the gateway may be given on that network (its first, a middle and its last host).
    const [net, bits] = subnets[0]!.split('/');
    const base = net!.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
    const size = 2 ** (32 - Number(bits));
    const address = (n: number) => [24, 16, 8, 0].map((shift) => (n >>> shift) & 255).join('.');
    for (const host of [base + 1, base + size / 2, base + size - 2])
      expect([address(host), covers(api.environment.TRUSTED_PROXIES, address(host))]).toEqual([address(host), true]);
    expect(covers(api.environment.TRUSTED_PROXIES, '203.0.113.7')).toBe(false);

    // The balancers an operator lists are the gateway's and the API's alike.
    const balancers = '203.0.113.7 198.51.100.0/24';
    const behind = JSON.parse(
      (
        await run('docker', ['compose', '-f', 'temporal-compose.yml', 'config', '--format', 'json'], {
          cwd: root,
          env: { ...process.env, ...secrets, TRUSTED_PROXIES: balancers },
          timeout: 30_000,
        })
      ).stdout,
    ).services;
    expect(behind.gateway.environment.TRUSTED_PROXIES).toBe(balancers);
    for (const host of ['203.0.113.7', '198.51.100.20', address(base + 1)])
      expect([host, covers(behind.api.environment.TRUSTED_PROXIES, host)]).toEqual([host, true]);
  });

  it('gives the gateway a config that Caddy itself accepts', async () => {
    const caddy = toolPath('caddy');
    const { stdout } = await run(caddy, ['validate', '--config', gatewayConfig(), '--adapter', 'caddyfile'], {
      timeout: 30_000,
    });
    expect(stdout).toContain('Valid configuration');
  }, 600_000);

  const gatewayConfig = (): string =>
    compose.services.gateway.volumes.find((v: { target: string }) => v.target === '/etc/caddy/Caddyfile').source;

  it('runs the server and UI versions npm run cluster builds', () => {
    expect(compose.services.temporal.image).toBe(`temporalio/server:${toolVersion('TEMPORAL_SERVER_VERSION')}`);
    expect(compose.services['temporal-schema'].image).toBe(
      `temporalio/admin-tools:${toolVersion('TEMPORAL_SERVER_VERSION')}`,
    );
    expect(compose.services['temporal-ui'].image).toBe(`temporalio/ui:${toolVersion('TEMPORAL_UI_VERSION')}`);
  });

  it('runs the server on the config and dynamic config npm run cluster uses', () => {
    const temporal = compose.services.temporal;
    const mount = temporal.volumes.find((v: { source: string }) => v.source === TEMPORAL_CONFIG_DIR);
    expect(mount).toBeDefined();
    const command = temporal.entrypoint.join(' ');
    expect(command).toContain(`--root ${mount.target} --config . --env ${TEMPORAL_CONFIG_ENV}`);
    expect(temporal.environment.TEMPORAL_DYNAMIC_CONFIG).toBe(`${mount.target}/dynamicconfig/production-sql.yaml`);
    expect(existsSync(join(TEMPORAL_CONFIG_DIR, `${TEMPORAL_CONFIG_ENV}.yaml`))).toBe(true);
  });

  it('sets up the schema with the same steps as npm run cluster', () => {
    const script = compose.services['temporal-schema'].entrypoint.join(' ');
    for (const step of SCHEMA_STEPS) expect(script).toContain(`${step.database}:${step.schema}`);
    for (const command of ['create-database', 'setup-schema -v 0.0', 'update-schema --schema-name'])
      expect(script).toContain(command);
    expect(compose.services['temporal-setup'].command).toEqual(['node', 'dist/scripts/temporal-setup.js']);
  });

  it("names every image by the build, and makes the build's version Current once its workers poll (docs/decisions/0386)", async () => {
    const { stdout } = await run('docker', ['compose', '-f', 'temporal-compose.yml', 'config', '--format', 'json'], {
      cwd: root,
      env: { ...process.env, ...secrets, TRANCHE_BUILD_ID: '0.1.0-4a2dfb04e6fb' },
      timeout: 30_000,
    });
    const built = JSON.parse(stdout).services;
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
    const parsed = async (extra: Record<string, string>) =>
      JSON.parse(
        (
          await run('docker', ['compose', '-f', 'temporal-compose.yml', 'config', '--format', 'json'], {
            cwd: root,
            env: { ...process.env, ...secrets, ...extra },
            timeout: 30_000,
          })
        ).stdout,
      ).services.api.environment;
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

  it('publishes no Temporal port beyond its network, and the Web UI on loopback only, read-only', () => {
    const published = (service: string): { host_ip?: string; published: string; target: number }[] =>
      compose.services[service].ports ?? [];
    // Every port but the gateway's is bound to loopback, or not published at all.
    for (const [name] of Object.entries(compose.services).filter(([name]) => name !== 'gateway'))
      for (const port of published(name))
        expect({ service: name, host_ip: port.host_ip }).toEqual({
          service: name,
          host_ip: '127.0.0.1',
        });
    // The frontend runs with no auth: it is published nowhere, not even on loopback.
    const temporal = compose.services.temporal;
    expect(temporal.entrypoint.join(' ')).toContain('--allow-no-auth');
    expect(published('temporal')).toEqual([]);
    for (const [name, service] of Object.entries(compose.services) as [
      string,
      { entrypoint?: string[]; command?: string[] },
    ][])
      if ([...(service.entrypoint ?? []), ...(service.command ?? [])].join(' ').includes('--allow-no-auth'))
        expect({ service: name, ports: published(name) }).toEqual({ service: name, ports: [] });
    const ui = compose.services['temporal-ui'];
    expect(published('temporal-ui').map((p) => [p.host_ip, p.published, p.target])).toEqual([
      ['127.0.0.1', '8233', 8080],
    ]);
    expect(ui.environment.TEMPORAL_DISABLE_WRITE_ACTIONS).toBe('true');
    // The UI's config file reads that variable into the setting that turns every write action off.
    expect(readFileSync(join(root, 'deploy', 'temporal-ui', 'docker.yaml'), 'utf8')).toMatch(
      /^disableWriteActions: \{\{ env "TEMPORAL_DISABLE_WRITE_ACTIONS"/m,
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

  it.each(Object.keys(secrets))('refuses to parse it without %s', async (name) => {
    const env = { ...process.env, ...secrets, [name]: '' };
    await expect(
      run('docker', ['compose', '-f', 'temporal-compose.yml', 'config', '--quiet'], {
        cwd: root,
        env,
        timeout: 30_000,
      }),
    ).rejects.toThrow(new RegExp(`required variable ${name}`));
  });
});

describe('configuration', () => {
  const valid = { DATABASE_URL: 'postgres://u:p@localhost:5432/db', NODE_ENV: 'development' };

  it('applies the documented defaults', () => {
    const config = loadConfig(valid);
    expect(config).toMatchObject({
      PORT: 3000,
      BEHAVIOUR_SET: 'A',
      TEMPORAL_ADDRESS: 'localhost:7233',
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'tranche',
    });
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
    expect(() => loadConfig({ NODE_ENV: 'development' })).toThrow(/DATABASE_URL:/);
  });

  it('requires an access-token signing key in production', () => {
    expect(() => loadConfig({ ...valid, NODE_ENV: 'production' })).toThrow(/ACCESS_TOKEN_PRIVATE_KEY/);
  });

  it("sizes a worker's workflow tasks within its cache, or refuses to start saying so", () => {
    expect(loadConfig(valid).WORKER_MAX_CONCURRENT_WORKFLOW_TASKS).toBe(100);
    const sized = { ...valid, WORKER_MAX_CACHED_WORKFLOWS: '400', WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '400' };
    expect(loadConfig(sized).WORKER_MAX_CONCURRENT_WORKFLOW_TASKS).toBe(400);
    expect(() => loadConfig({ ...sized, WORKER_MAX_CACHED_WORKFLOWS: '200' })).toThrow(
      /WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: at most WORKER_MAX_CACHED_WORKFLOWS/,
    );
    // With no cache, every workflow task replays its history, and the two are not tied.
    expect(loadConfig({ ...sized, WORKER_MAX_CACHED_WORKFLOWS: '0' }).WORKER_MAX_CACHED_WORKFLOWS).toBe(0);
  });
});
