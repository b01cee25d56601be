import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, freePortRange } from '../../scripts/lib/free-port';

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

/** `npm start` and `npm run cluster` say which part failed, why, and what to do (issue 20, item 12). */
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
