import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, freePortRange } from '../../scripts/lib/free-port';
import { freshDatabase } from '../support/service';
import { spawnEntryPoint } from '../support/entry-point';
import { until } from '../support/wait';

const root = join(__dirname, '..', '..');

/** A plain TCP listener on loopback: what a database left over from an earlier run looks like to a new one. */
function occupy(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** Runs a start script to its end; its exit code and everything it printed. */
function runScript(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const clean = { ...process.env } as Record<string, string>;
  // The test stack's own PostgreSQL and Temporal: the scripts must start embedded ones instead.
  delete clean.DATABASE_URL;
  delete clean.TEMPORAL_ADDRESS;
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, script)], {
    env: { ...clean, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

/**
 * `npm start` and `npm run cluster` say which part failed, why, and what to do
 * (docs/decisions/0200-start-up-failures-named.md).
 */
describe('start-up failures', () => {
  const dir = mkdtempSync(join(tmpdir(), 'startup-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('npm start names the taken PostgreSQL port, the process holding it and a remedy', async () => {
    const pgPort = await freePort();
    const squatter = await occupy(pgPort);
    try {
      const { code, output } = await runScript('scripts/dev.ts', {
        TRANCHE_DATA_DIR: join(dir, 'start'),
        EMBEDDED_PG_PORT: String(pgPort),
        PORT: String(await freePort()),
        TEMPORAL_PORT: String(await freePort()),
        TEMPORAL_UI_PORT: String(await freePort()),
        TEMPORAL_CLI: process.env.TEMPORAL_CLI ?? '/nonexistent/temporal',
      });
      expect(code).toBe(1);
      expect(output).not.toMatch(/undefined/);
      expect(output).toContain(`PostgreSQL`);
      expect(output).toContain(`port ${pgPort}`);
      // The holder is this test process's listener.
      expect(output).toContain(`pid ${process.pid}`);
      expect(output).toMatch(/EMBEDDED_PG_PORT=\d+ npm start/);
    } finally {
      squatter.close();
    }
  }, 120_000);

  it('npm run cluster names its taken public port and a remedy before starting anything', async () => {
    const port = await freePort();
    const squatter = await occupy(port);
    // Stand-ins for the server build: nothing may run before the ports are checked.
    const tools = join(dir, 'temporal-server');
    mkdirSync(tools, { recursive: true });
    for (const tool of ['server', 'sql']) writeFileSync(join(tools, tool), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    try {
      const { code, output } = await runScript('scripts/cluster.ts', {
        TRANCHE_DATA_DIR: join(dir, 'cluster'),
        PORT: String(port),
        CLUSTER_API_PORT_1: String(await freePort()),
        CLUSTER_API_PORT_2: String(await freePort()),
        EMBEDDED_PG_PORT: String(await freePort()),
        TEMPORAL_PORT_BASE: String(await freePortRange(210)),
        TEMPORAL_UI_PORT: String(await freePort()),
        TEMPORAL_SERVER_DIR: tools,
        CLUSTER_LOG: 'stdout',
      });
      expect(code).toBe(1);
      expect(output).not.toMatch(/undefined/);
      expect(output).toContain(`port ${port}`);
      expect(output).toContain(`pid ${process.pid}`);
      expect(output).toMatch(/PORT=\d+ npm run cluster/);
    } finally {
      squatter.close();
    }
  }, 120_000);

  it('npm run cluster names a missing Temporal server build, where it looked, and how to build it', async () => {
    const { code, output } = await runScript('scripts/cluster.ts', {
      TRANCHE_DATA_DIR: join(dir, 'cluster-2'),
      PORT: String(await freePort()),
      CLUSTER_API_PORT_1: String(await freePort()),
      CLUSTER_API_PORT_2: String(await freePort()),
      EMBEDDED_PG_PORT: String(await freePort()),
      TEMPORAL_PORT_BASE: String(await freePortRange(210)),
      TEMPORAL_UI_PORT: String(await freePort()),
      TEMPORAL_SERVER_DIR: join(dir, 'no-temporal-server'),
      CLUSTER_LOG: 'stdout',
    });
    expect(code).toBe(1);
    expect(output).not.toMatch(/undefined/);
    expect(output).toContain(join(dir, 'no-temporal-server'));
    expect(output).toContain('bash scripts/tools.sh temporal-server');
  }, 120_000);
});

/**
 * A deployed process (`npm run api`, `npm run worker`, the image) is production unless NODE_ENV
 * opts out: no secret of its own means no start, never a public fallback
 * (docs/decisions/0259-production-by-default.md).
 */
describe('production by default, as a process', () => {
  /** The environment a deployment would pass, with no NODE_ENV and none of the secrets. */
  const deployed = async (): Promise<Record<string, string>> => {
    const env = { ...process.env } as Record<string, string>;
    for (const name of [
      'NODE_ENV',
      'ACCESS_TOKEN_PRIVATE_KEY',
      'WEBHOOK_SECRET_KEY',
      'WEBHOOK_SECRET_KEYS',
      'SANDBOX_NOTIFICATION_SECRET',
      'PAYMENT_PROCESSOR',
      'PAYMENTS_SANDBOX_IN_PRODUCTION',
      'DEV_IDP_ENABLED',
    ])
      delete env[name];
    return { ...env, LOG_LEVEL: 'warn', DATABASE_URL: await freshDatabase(), PORT: String(await freePort()) };
  };
  const secrets = () => ({
    ACCESS_TOKEN_PRIVATE_KEY: generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString(),
    WEBHOOK_SECRET_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    SANDBOX_NOTIFICATION_SECRET: randomBytes(32).toString('hex'),
  });

  /** Starts an entry point; its exit code and output, or null and the output so far once it is still up after `upMs`. */
  function start(file: string, env: Record<string, string>, upMs = 30_000) {
    const entry = spawnEntryPoint(file, env);
    let timer: NodeJS.Timeout | undefined;
    const stillUp = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), upMs)));
    return Promise.race([entry.exited, stillUp]).then(async (code) => {
      clearTimeout(timer);
      if (code === null) await entry.stop();
      return { code, output: entry.output() };
    });
  }

  it.each(['server/main.ts', 'worker/main.ts'])(
    '%s with no NODE_ENV refuses to start, naming every missing secret and how to make it',
    async (file) => {
      const { code, output } = await start(file, await deployed());
      expect(code).not.toBe(null); // it did not stay up on a development default
      expect(code).not.toBe(0);
      expect(output).toMatch(/ACCESS_TOKEN_PRIVATE_KEY: required in production.*openssl genpkey/);
      expect(output).toMatch(/WEBHOOK_SECRET_KEYS: required in production.*openssl rand -base64 32/);
      expect(output).toMatch(/PAYMENT_PROCESSOR: the sandbox processor .* refused in production/);
      expect(output).toMatch(/NODE_ENV=development/);
    },
    60_000,
  );

  it('refuses the payment sandbox in production unless PAYMENTS_SANDBOX_IN_PRODUCTION=true', async () => {
    const { code, output } = await start('server/main.ts', { ...(await deployed()), ...secrets() });
    expect(code).not.toBe(null);
    expect(code).not.toBe(0);
    expect(output).toMatch(/PAYMENT_PROCESSOR: .*PAYMENTS_SANDBOX_IN_PRODUCTION=true/);
    expect(output).not.toMatch(/ACCESS_TOKEN_PRIVATE_KEY:|WEBHOOK_SECRET_KEYS:/);
  }, 60_000);

  // A fault test's pause point stops a worker with money in flight (lib/runtime/test-pause.ts): only NODE_ENV=test
  // may name one, so no deployed or development worker can be made to stop there (docs/decisions/0374-refund-intents.md).
  it('refuses a pause point of the fault tests outside NODE_ENV=test, as a worker process', async () => {
    const pause = { TEST_PAUSE_AT: 'refund-sent', TEMPORAL_TASK_QUEUE: `pause-${randomBytes(4).toString('hex')}` };
    const production = { ...(await deployed()), ...secrets(), PAYMENTS_SANDBOX_IN_PRODUCTION: 'true', ...pause };
    const development = { ...(await deployed()), NODE_ENV: 'development', ...pause };
    for (const env of [production, development]) {
      const { code, output } = await start('worker/main.ts', env);
      expect({
        code,
        refused: /TEST_PAUSE_AT: a pause point for the fault tests: only with NODE_ENV=test/.test(output),
      }).toEqual({
        code: expect.any(Number),
        refused: true,
      });
      expect(code).not.toBe(0);
      expect(output).not.toMatch(/required in production/); // refused for the pause point alone
    }
  }, 90_000);

  it('with PAYMENTS_SANDBOX_IN_PRODUCTION=true, says so in /ready and in the console header', async () => {
    const env: Record<string, string> = {
      ...(await deployed()),
      ...secrets(),
      PAYMENTS_SANDBOX_IN_PRODUCTION: 'true',
      TEMPORAL_TASK_QUEUE: `sandbox-${randomBytes(4).toString('hex')}`,
    };
    const api = spawnEntryPoint('server/main.ts', env);
    // /ready waits for a warm worker on the same database (docs/decisions/0302-warm-before-ready.md).
    const worker = spawnEntryPoint('worker/main.ts', env);
    const output = () => api.output() + worker.output();
    const base = `http://127.0.0.1:${env.PORT}`;
    try {
      let ready = null as Response | null;
      // Until ready, or the API exits, or time is up: the expectation below says which.
      await until(
        'the API to be ready, or to exit',
        async () => (ready = await fetch(`${base}/ready`).catch(() => null))?.ok || api.child.exitCode !== null,
        { timeoutMs: 90_000, intervalMs: 300 },
      ).catch(() => undefined);
      expect({ status: ready?.status, output: output() }).toMatchObject({ status: 200 });
      expect(((await ready!.json()) as { data: unknown }).data).toMatchObject({
        database: 'ok',
        temporal: 'ok',
        payments_sandbox_in_production: true,
      });
      const signIn = await fetch(`${base}/console/sign-in`);
      expect(await signIn.text()).toMatch(
        /<mark data-testid="sandbox-in-production">Payment sandbox in production: no money moves<\/mark>/,
      );
    } finally {
      await Promise.all([api.stop(), worker.stop()]);
    }
  }, 120_000);
});
