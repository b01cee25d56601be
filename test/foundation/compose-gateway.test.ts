import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { ConfigSchema } from '../../lib/runtime/config';
import { toolPath } from '../support/tools';
import { composeConfig, run, toolVersion } from './support/compose';

/** The compose file's API replicas behind one gateway, and whom they trust. */
describe('deployment shape', () => {
  let compose: any;
  beforeAll(async () => {
    compose = await composeConfig();
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
    const behind = (await composeConfig({ TRUSTED_PROXIES: balancers })).services;
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
});
