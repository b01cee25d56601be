import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../scripts/lib/free-port';
import { stopProcess } from '../../../scripts/lib/temporal-dev-server';
import { until } from '../../support/wait';
import { toolPath } from '../../support/tools';

const root = join(__dirname, '..', '..', '..');

/**
 * The shipped gateway (deploy/gateway/Caddyfile) as it is, in Caddy, with only its upstream (the
 * compose service's DNS name) and port changed to one API on loopback; TRUSTED_PROXIES as given.
 */
export async function shippedGateway(apiPort: number, trustedProxies: string) {
  const caddy = toolPath('caddy');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gateway-'));
  const shipped = readFileSync(join(root, 'deploy/gateway/Caddyfile'), 'utf8');
  const config = shipped
    .replace(/dynamic a \{[^}]*\}/, `to 127.0.0.1:${apiPort}`)
    .replace(':3000 {', `:${port} {\n\tbind 127.0.0.1`);
  if (config === shipped) throw new Error('deploy/gateway/Caddyfile changed shape; update this test support');
  const file = join(dir, 'Caddyfile');
  writeFileSync(file, config);
  const child = spawn(caddy, ['run', '--config', file, '--adapter', 'caddyfile'], {
    env: { ...process.env, TRUSTED_PROXIES: trustedProxies, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
    stdio: 'ignore',
  });
  const started = async () => {
    if (child.exitCode !== null) throw new Error(`Caddy exited (${file})`);
    return answers(port);
  };
  await until(`Caddy to start (${file})`, started, { timeoutMs: 30_000, intervalMs: 200 });
  return {
    port,
    async stop() {
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const answers = (port: number) =>
  send({ port, from: '127.0.0.1', method: 'GET', path: '/health' }).then(
    () => true,
    () => false,
  );

/** One HTTP request from a chosen local address (127.0.0.2 is another client on loopback). */
export function send(opts: {
  port: number;
  from: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
}): Promise<{ status: number; body: any }> {
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: opts.port,
        localAddress: opts.from,
        method: opts.method,
        path: opts.path,
        timeout: 30_000,
        headers: { ...opts.headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: kept as text
          }
          resolve({ status: res.statusCode!, body });
        });
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.end(payload);
  });
}
