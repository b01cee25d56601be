import { randomUUID } from 'node:crypto';
import { chmodSync, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeRestartablePort } from './support/restartable-port';
import { startTemporalDevServer, type RunningTemporal } from '../../scripts/lib/temporal-dev-server';
import { http, type Reply } from '../support/http';
import { spawnPostgres, type PostgresProcess } from './support/postgres-process';
import { startServicePair, type ServicePair } from './support/service-pair';
import { eventually } from '../support/wait';
import { THROUGH_A_RESTART, wireFlowWorld } from './support/subscription-flow';

/**
 * PostgreSQL stopped, then the Temporal server killed, under a running API (docs/decisions/0199-outages-answer-503.md).
 * Expected: while a dependency is away every route answers 503 SERVICE_UNAVAILABLE naming it, with
 * Retry-After, in the one error envelope, never 500; /ready names the one that is down; /health
 * still answers (the process is alive); once it is back, the same requests succeed.
 */
type World = Awaited<ReturnType<typeof wireFlowWorld>>;

describe('a dependency outage', () => {
  let pair: ServicePair;
  let postgres: PostgresProcess;
  let temporal: RunningTemporal;
  let pgPort: number;
  let temporalPort: number;
  const dir = mkdtempSync(join(tmpdir(), 'fault-outage-'));
  // The server runs as the `postgres` user when started by root; it must reach the folder.
  chmodSync(dir, 0o755);
  const startPostgres = () => spawnPostgres(join(dir, 'pg'), pgPort);
  const startTemporal = () =>
    startTemporalDevServer({
      binary: process.env.TEMPORAL_CLI!,
      port: temporalPort,
      dbFile: join(dir, 'temporal.db'),
      logFile: createWriteStream(join(dir, 'temporal.log'), { flags: 'a' }),
    });

  beforeAll(async () => {
    [pgPort, temporalPort] = [await freeRestartablePort(), await freeRestartablePort()];
    [postgres, temporal] = await Promise.all([startPostgres(), startTemporal()]);
    pair = await startServicePair({ databaseUrl: postgres.url, temporalAddress: temporal.address });
  }, 300_000);
  afterAll(async () => {
    await pair?.stop();
    await temporal?.stop();
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  function expectUnavailable(reply: Reply, dependency: 'database' | 'temporal', route: string): void {
    expect({ route, status: reply.status, code: reply.body?.error?.code }).toEqual({
      route,
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
    });
    expect(reply.body).toMatchObject({ success: false, error: { details: { dependency } } });
    expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
  }

  /** A read, a list, a command and a create: each the way a client sends it. */
  function routes(w: World, subscriptionId: string, view: { offering_id: string; security_class_id: string }) {
    const api = http(pair.baseUrl);
    const key = () => ({ 'idempotency-key': randomUUID() });
    return {
      'GET /issuance/subscriptions/:id': () => api.get(`/issuance/subscriptions/${subscriptionId}`, w.tokens.investor),
      'GET /issuance/subscriptions': () => api.get('/issuance/subscriptions', w.tokens.staff),
      'POST /issuance/subscriptions/:id/approve': () =>
        api.post(`/issuance/subscriptions/${subscriptionId}/approve`, w.tokens.staff, {}, key()),
      'POST /issuance/offerings/:id/subscriptions': () =>
        api.post(
          `/issuance/offerings/${view.offering_id}/subscriptions`,
          w.tokens.investor,
          { securityClassId: view.security_class_id, unitsSubscribed: 1 },
          key(),
        ),
      'GET /notifications/webhook-endpoints': () => api.get('/notifications/webhook-endpoints', w.tokens.staff),
    };
  }

  it('answers 503 naming PostgreSQL while it is stopped, and serves again once it is back', async () => {
    const w = await wireFlowWorld({ baseUrl: pair.baseUrl, pem: pair.pem, databaseUrl: postgres.url });
    const api = http(pair.baseUrl);
    const [sub, other] = [await w.toReview(), await w.toReview()];
    const calls = routes(w, sub.id, await w.get(sub.id));

    await postgres.stop();
    try {
      for (const [route, call] of Object.entries(calls)) expectUnavailable(await call(), 'database', route);
      const ready = await api.get('/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.error).toMatchObject({ code: 'NOT_READY', details: { database: 'down', temporal: 'ok' } });
      expect(ready.body.error.message).toMatch(/PostgreSQL/);
      expect((await api.get('/health')).status).toBe(200);
      // A console page (its session cookie is the access token) says so too, as a page.
      const page = await fetch(`${pair.baseUrl}/console/`, {
        headers: { cookie: `tranche_console=${w.tokens.consoleStaff}` },
      });
      expect([page.status, Number(page.headers.get('retry-after')) > 0]).toEqual([503, true]);
      expect(await page.text()).toContain('PostgreSQL cannot be reached');
    } finally {
      postgres = await startPostgres();
    }
    await eventually(
      'the read is served again',
      async () => {
        const r = await api.get(`/issuance/subscriptions/${sub.id}`, w.tokens.investor);
        if (r.status !== 200) throw new Error(`status ${r.status}`);
      },
      THROUGH_A_RESTART,
    );
    expect((await api.get('/ready')).status).toBe(200);
    expect((await w.approve(other.id)).status).toBe('approved');
  }, 300_000);

  it('answers 503 naming Temporal while it is down, and takes commands again once it is back', async () => {
    const w = await wireFlowWorld({ baseUrl: pair.baseUrl, pem: pair.pem, databaseUrl: postgres.url });
    const api = http(pair.baseUrl);
    const sub = await w.toReview();
    const calls = routes(w, sub.id, await w.get(sub.id));

    temporal.process.kill('SIGKILL');
    await new Promise((r) => temporal.process.once('exit', r));
    try {
      // The command meets Temporal first; once it is known down, every route answers at once.
      expectUnavailable(await calls['POST /issuance/subscriptions/:id/approve'](), 'temporal', 'approve');
      for (const [route, call] of Object.entries(calls)) {
        const started = Date.now();
        expectUnavailable(await call(), 'temporal', route);
        expect(Date.now() - started).toBeLessThan(5000);
      }
      const ready = await api.get('/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.error).toMatchObject({ code: 'NOT_READY', details: { database: 'ok', temporal: 'down' } });
      expect(ready.body.error.message).toMatch(/Temporal/);
      expect((await api.get('/health')).status).toBe(200);
    } finally {
      temporal = await startTemporal();
    }
    await eventually(
      'the API is ready again',
      async () => {
        const r = await api.get('/ready');
        if (r.status !== 200) throw new Error(`status ${r.status}`);
      },
      THROUGH_A_RESTART,
    );
    expect((await w.approve(sub.id)).status).toBe('approved');
  }, 300_000);
});
