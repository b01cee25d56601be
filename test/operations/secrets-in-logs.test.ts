import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { freePort } from '../../scripts/lib/free-port';
import { http } from '../support/http';
import { freshDatabase } from '../support/service';
import { accessTokenKey, serviceEnv, spawnService, waitReady, type ServiceProcess } from '../faults/support/processes';
import { wireFlowWorld } from '../faults/support/subscription-flow';
import { eventually } from '../support/wait';
import { ConnectProxy } from '../webhooks/support/connect-proxy';

/**
 * A full run as deployed (a worker and an API process, debug logging), driven through a token
 * exchange, a webhook endpoint that receives signed deliveries through an egress proxy that demands
 * credentials, and a wire subscription to completion; then every credential the run saw is looked
 * for in every log line.
 */
describe('the logs of a full run', () => {
  const processes: ServiceProcess[] = [];
  const secrets: Record<string, string> = {};
  const received: Record<string, string>[] = [];
  let receiver: Server;
  let proxy: ConnectProxy;
  let baseUrl: string;
  let logs = '';
  let metrics: { temporal: string; worker: string };

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      received.push(req.headers as Record<string, string>);
      req.resume().on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    secrets.proxyPassword = randomBytes(12).toString('hex');
    secrets.proxyAuthorization = Buffer.from(`tranche:${secrets.proxyPassword}`).toString('base64');
    proxy = await ConnectProxy.start({ requireAuthorization: `Basic ${secrets.proxyAuthorization}` });
    const pem = (secrets.accessTokenKey = accessTokenKey());
    const port = await freePort();
    const [temporalMetricsPort, workerMetricsPort] = [await freePort(), await freePort()];
    const databaseUrl = await freshDatabase();
    const env = serviceEnv({
      databaseUrl,
      port,
      pem,
      extra: {
        LOG_LEVEL: 'debug',
        WEBHOOK_SECRET_KEY: (secrets.webhookSecretKey = randomBytes(32).toString('base64')),
        IDENTITY_PROVIDER_WEBHOOK_SECRET: (secrets.providerSecret = randomBytes(24).toString('hex')),
        SANDBOX_NOTIFICATION_SECRET: (secrets.sandboxSecret = randomBytes(24).toString('hex')),
        WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
        WEBHOOK_HTTP_PROXY: proxy.url(`tranche:${secrets.proxyPassword}`),
        DEV_IDP_ENABLED: 'true',
        TEMPORAL_METRICS_PORT: String(temporalMetricsPort),
        WORKER_METRICS_PORT: String(workerMetricsPort),
      },
    });
    const worker = spawnService('worker/main.ts', env, 'worker');
    processes.push(worker);
    await worker.waitForLog(/worker started/);
    processes.push(spawnService('server/main.ts', env, 'api'));
    baseUrl = `http://127.0.0.1:${port}`;
    await waitReady(baseUrl);
    const api = http(baseUrl);

    // The exchange: a dev IdP ID token and API key for a fresh admin, swapped for an access token.
    const org = '6f1c1f5e-1a1b-4c3d-9e8f-0a1b2c3d4e5f';
    const minted = await api.post('/dev-idp/mint', undefined, { user_id: 'admin-1', org_id: org, roles: ['admin'] });
    secrets.idToken = minted.body.data.id_token;
    secrets.apiKey = minted.body.data.api_key;
    const exchanged = await api.call('POST', '/identity/auth/exchange', {
      body: { token: secrets.idToken },
      headers: { 'x-api-key': secrets.apiKey! },
    });
    expect(exchanged.status).toBe(200);
    secrets.exchangedAccessToken = exchanged.body.data.access_token;

    // A wire subscription to completion, with a webhook endpoint taking every event.
    const world = await wireFlowWorld({ baseUrl, pem, databaseUrl });
    secrets.staffToken = world.tokens.staff;
    secrets.investorToken = world.tokens.investor;
    const endpoint = await api.post('/notifications/webhook-endpoints', world.tokens.staff, {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      eventTypes: ['*'],
    });
    expect(endpoint.status).toBe(201);
    secrets.signingSecret = endpoint.body.data.signing_secret;
    const s = await world.toReview();
    await world.approve(s.id);
    await world.reconcile(s.reference_code);
    await eventually(
      'deliveries',
      async () => {
        if (received.length < 5) throw new Error(`${received.length} deliveries so far`);
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    for (const [i, h] of received.entries()) secrets[`deliverySignature${i}`] = h['x-service-signature']!;
    metrics = {
      temporal: await (await fetch(`http://127.0.0.1:${temporalMetricsPort}/metrics`)).text(),
      worker: await (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text(),
    };
    await Promise.all(processes.map((p) => p.stop()));
    logs = processes.map((p) => p.logs()).join('\n');
  }, 300_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    receiver?.close();
    await proxy?.stop();
  });

  it('ran for real: logs at debug from both processes, deliveries signed', () => {
    expect(logs.split('\n').length).toBeGreaterThan(50);
    expect(received.length).toBeGreaterThanOrEqual(5);
    expect(Object.values(secrets).every((v) => typeof v === 'string' && v.length >= 16)).toBe(true);
  });

  it('holds no secret, token or key in any log line', () => {
    const found = Object.entries(secrets).flatMap(([name, value]) => {
      // A PEM is looked for by its body lines, the part that is the key.
      const needles =
        name === 'accessTokenKey' ? value.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----')) : [value];
      return needles.filter((n) => logs.includes(n)).map(() => name);
    });
    expect(found).toEqual([]);
    expect(logs).not.toMatch(/PRIVATE KEY/);
    expect(logs).not.toMatch(/Bearer\s+ey/);
  });

  it('sent the deliveries through the egress proxy, which the worker names by host:port only', () => {
    expect(proxy.connects.length).toBeGreaterThanOrEqual(1);
    expect(proxy.connects.every((c) => c.answered === 200)).toBe(true);
    const started = logs
      .split('\n')
      .filter((l) => l.includes('"delivery engine started"'))
      .map((l) => JSON.parse(l));
    expect(started.map((l) => l.egressProxy)).toEqual([`127.0.0.1:${proxy.port}`]);
  });

  it('logs the request id beside the workflow id of each command it sends', () => {
    const commands = logs
      .split('\n')
      .filter((l) => l.includes('"workflow command"'))
      .map((l) => JSON.parse(l));
    expect(commands.map((c) => c.command)).toEqual(
      expect.arrayContaining(['update-with-start:created', 'update:approve', 'update:reconcileFunds']),
    );
    for (const c of commands) {
      expect(c.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(c.workflowId).toMatch(/^subscription-/);
    }
  });

  it('exports the Temporal SDK worker metrics and the service registry from the worker', () => {
    expect(metrics.temporal).toMatch(/^temporal_workflow_task_execution_latency/m);
    expect(metrics.worker).toContain('tranche_process_resident_memory_bytes');
  });
});
