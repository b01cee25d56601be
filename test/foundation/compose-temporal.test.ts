import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SCHEMA_STEPS, TEMPORAL_CONFIG_DIR, TEMPORAL_CONFIG_ENV } from '../../scripts/lib/temporal-server';
import { composeConfig, root, toolVersion } from './support/compose';

/** The compose file's Temporal: the server npm run cluster builds and runs, published nowhere, its Web UI read-only. */
describe('deployment shape', () => {
  let compose: any;
  beforeAll(async () => {
    compose = await composeConfig();
  });

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
});
