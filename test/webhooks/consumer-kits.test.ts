import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { PATHS } from './support/hooks';
import { until } from '../support/wait';
import { exited } from './support/processes';

const ROOT = join(__dirname, '../..');
const KITS = join(ROOT, 'docs/integrators/webhooks');
const GO_BINARY = join(tmpdir(), `tranche-kit-go-${process.pid}`);

type Lang = 'typescript' | 'python' | 'go';
type Scheme = 'spec' | 'standard';
interface Exchange {
  headers: Record<string, string>;
  body: string;
  status: number;
  outcome: string;
}

/** Starts a consumer kit's receiver as its own process; resolves with its port once it listens. */
async function startKit(lang: Lang, env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const command: Record<Lang, [string, string[]]> = {
    typescript: [process.execPath, ['--import', 'tsx', join(KITS, 'typescript/receiver.ts')]],
    python: ['python3', [join(KITS, 'python/receiver.py')]],
    go: [GO_BINARY, []],
  };
  const [cmd, args] = command[lang];
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${lang} kit exited (${code})`)));
    setTimeout(() => reject(new Error(`${lang} kit did not start in 60 s`)), 60_000).unref();
  });
  return { child, port: (JSON.parse(line) as { port: number }).port };
}

/** Sends one request to a kit exactly as given (the raw body bytes, the headers). */
async function send(
  port: number,
  req: { headers: Record<string, string>; body: string },
): Promise<{ status: number; outcome: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/webhooks`, {
    method: 'POST',
    headers: req.headers,
    body: req.body,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, outcome: ((await res.json()) as { outcome: string }).outcome };
}

/**
 * Between the service and the kits: forwards each delivery untouched and keeps the exchange, so a
 * test can send a real delivery again, altered or not.
 */
function recordingProxy() {
  const routes = new Map<string, number>();
  const seen = new Map<string, Exchange[]>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const name = (req.url ?? '').slice(1);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v;
      const body = Buffer.concat(chunks).toString('utf8');
      const port = routes.get(name);
      const answer = port ? await send(port, { headers, body }) : { status: 404, outcome: 'no_kit' };
      seen.set(name, [...(seen.get(name) ?? []), { headers, body, ...answer }]);
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ outcome: answer.outcome }));
    });
  });
  return {
    server,
    route: (name: string, port: number) => routes.set(name, port),
    exchanges: (name: string, n: number) =>
      until(
        `${n} deliveries to ${name}`,
        async () => ((seen.get(name) ?? []).length >= n ? seen.get(name)! : undefined),
        { timeoutMs: 60_000 },
      ),
  };
}

describe('consumer kits verify real deliveries (docs/integrators/webhooks)', () => {
  let svc: TestService;
  let api: ReturnType<typeof http>;
  let staff: Actor;
  const proxy = recordingProxy();
  let proxyPort = 0;
  const kits: ChildProcess[] = [];
  const base = PATHS.A.endpoints;

  beforeAll(async () => {
    const build = promisify(execFile)('go', ['build', '-o', GO_BINARY, '.'], {
      cwd: join(KITS, 'go'),
      env: { ...process.env, CGO_ENABLED: '0' },
      timeout: 240_000,
    });
    svc = await startService({ set: 'A', env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } });
    api = http(svc.baseUrl);
    staff = await actor(svc, newOrg(), ['staff']);
    proxyPort = await new Promise((resolve) =>
      proxy.server.listen(0, '127.0.0.1', () => resolve((proxy.server.address() as AddressInfo).port)),
    );
    await build;
  }, 300_000);
  afterAll(async () => {
    for (const k of kits) k.kill('SIGTERM');
    await Promise.all(kits.map(exited));
    proxy.server.closeAllConnections();
    await new Promise((r) => proxy.server.close(r));
    await svc.stop();
  });

  describe.each([
    ['typescript', 'spec'],
    ['typescript', 'standard'],
    ['python', 'spec'],
    ['python', 'standard'],
    ['go', 'spec'],
    ['go', 'standard'],
  ] as [Lang, Scheme][])('%s kit, %s scheme', (lang, scheme) => {
    const name = `${lang}-${scheme}`;
    let port = 0;
    let secret = '';
    let endpointId = '';
    let good: Exchange;
    const ping = async () => expect((await api.post(`${base}/${endpointId}/test`, staff.token)).status).toBe(202);

    beforeAll(async () => {
      const res = await api.post(base, staff.token, {
        url: `http://127.0.0.1:${proxyPort}/${name}`,
        description: name,
        eventTypes: ['test.ping'],
      });
      ({ id: endpointId, signing_secret: secret } = res.body.data);
      const kit = await startKit(lang, { WEBHOOK_SECRET: secret, SCHEME: scheme });
      kits.push(kit.child);
      port = kit.port;
      proxy.route(name, port);
    }, 120_000);

    it('accepts a real delivery', async () => {
      await ping();
      good = (await proxy.exchanges(name, 1))[0]!;
      expect(good).toMatchObject({ status: 200, outcome: 'accepted' });
      const deliveryId = good.headers['x-service-delivery-id'];
      await until(`delivery ${deliveryId} a success`, async () =>
        (await api.get(`${PATHS.A.deliveries}/${deliveryId}`, staff.token)).body.data?.status === 'success'
          ? true
          : undefined,
      );
    });

    it('rejects the delivery with its body or signature tampered', async () => {
      const body = good.body.replace('"version":"1"', '"version":"2"');
      expect(await send(port, { headers: good.headers, body })).toEqual({ status: 401, outcome: 'bad_signature' });
      // Well-formed, but not the signature of this body under this secret.
      const forged: Record<string, string> =
        scheme === 'spec'
          ? { 'x-service-signature': `sha256=${'0'.repeat(64)}` }
          : { 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` };
      expect(await send(port, { headers: { ...good.headers, ...forged }, body: good.body })).toEqual({
        status: 401,
        outcome: 'bad_signature',
      });
    });

    it('does not process a replayed delivery twice', async () => {
      expect(await send(port, good)).toEqual({ status: 200, outcome: 'duplicate' });
    });

    if (scheme === 'standard') {
      it('rejects a correctly signed delivery whose webhook-timestamp is stale', async () => {
        const signer = new Webhook(secret); // the maintained library signs, not our code
        const old = new Date(Date.now() - 10 * 60_000);
        const id = `msg_${name}_stale`;
        const headers = {
          ...good.headers,
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(old.getTime() / 1000)),
          'webhook-signature': signer.sign(id, old, good.body),
        };
        expect(await send(port, { headers, body: good.body })).toEqual({ status: 401, outcome: 'stale' });
      });
    }

    it(
      scheme === 'standard'
        ? 'keeps accepting during the rotation overlap'
        : 'rejects a delivery signed after rotation until it has the new secret',
      async () => {
        expect((await api.post(`${base}/${endpointId}/rotate-secret`, staff.token)).status).toBe(200);
        await ping();
        const [, after] = await proxy.exchanges(name, 2);
        // §6.4 signs with the new secret at once; Standard Webhooks also signs with the old one for 24 h.
        expect(after).toMatchObject(
          scheme === 'standard' ? { status: 200, outcome: 'accepted' } : { status: 401, outcome: 'bad_signature' },
        );
      },
    );
  });
});
