import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { AccessTokens } from '../../identity/access-tokens';
import { freePort } from '../../scripts/lib/free-port';
import { http } from '../support/http';
import { freshDatabase } from '../support/service';
import { accessTokenKey, serviceEnv, spawnService, type ServiceProcess } from '../faults/support/processes';
import { Receiver } from './support/receiver';

/** The warm lock's advisory class (webhooks/dispatch/listener.ts), as PostgreSQL shows it. */
const WARM_LOCK_CLASS = 7_461_220;
const ALL_PARTS = ['database_pool', 'publish_statement', 'temporal', 'request_path', 'worker'];

/**
 * A fresh worker and API, as deployed (docs/decisions/0302-warm-before-ready.md): /ready answers
 * 200 only once the API's warm-up has run and a worker holds the warm lock, and says which parts
 * warmed; test pings sent in the first second after it are all delivered, each once.
 */
describe('a fresh start: warm before ready', () => {
  const processes: ServiceProcess[] = [];
  let receiver: Receiver;
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await receiver?.stop();
  });

  it('answers /ready once warm, and delivers every ping sent in the first second after it', async () => {
    receiver = await Receiver.start();
    const pem = accessTokenKey();
    const port = await freePort();
    const workerMetricsPort = await freePort();
    const databaseUrl = await freshDatabase();
    const env = serviceEnv({
      databaseUrl,
      port,
      pem,
      extra: { WORKER_METRICS_PORT: String(workerMetricsPort), METRICS_HOST: '127.0.0.1' },
    });
    processes.push(spawnService('worker/main.ts', env, 'worker'));
    processes.push(spawnService('server/main.ts', env, 'api'));
    const baseUrl = `http://127.0.0.1:${port}`;
    const api = http(baseUrl);
    const db = new PgClient({ connectionString: databaseUrl });
    await db.connect();
    try {
      // Looked at every 20 ms; at the first 200, whether a worker held the warm lock at that moment.
      const notReady: { code: string; warming: string[] }[] = [];
      let ready: { warmed: string[] } | undefined;
      let warmWorkerAtReady = false;
      for (const deadline = Date.now() + 150_000; !ready && Date.now() < deadline;) {
        const res = await api.get('/ready').catch(() => undefined);
        if (res?.status === 200) {
          const { rows } = await db.query<{ n: number }>(
            `select count(*)::int as n from pg_locks l join pg_database d on d.oid = l.database
              where l.locktype = 'advisory' and l.classid = $1 and l.granted and d.datname = current_database()`,
            [WARM_LOCK_CLASS],
          );
          warmWorkerAtReady = rows[0]!.n > 0;
          ready = res.body.data;
        } else {
          if (res?.status === 503 && res.body.error.details?.warming)
            notReady.push({ code: res.body.error.code, warming: res.body.error.details.warming });
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      expect(ready).toEqual(expect.objectContaining({ database: 'ok', temporal: 'ok', warmed: ALL_PARTS }));
      expect(warmWorkerAtReady).toBe(true);
      // Whatever was seen while warming was a 503 NOT_READY naming the parts still to run.
      for (const seen of notReady) {
        expect(seen.code).toBe('NOT_READY');
        expect(seen.warming.length).toBeGreaterThan(0);
      }

      // The first second: an endpoint, then five test pings 200 ms apart, each sent on its schedule.
      const tokens = await AccessTokens.create({ privateKeyPem: pem, ttlSeconds: 600 });
      const staff = await tokens.sign({ userId: 'staff', orgId: randomUUID(), roles: ['staff'], kycCompleted: false });
      const hook = randomUUID();
      const created = await api.post('/notifications/webhook-endpoints', staff, {
        url: receiver.url(hook),
        eventTypes: ['subscription.approved'],
      });
      expect(created.status).toBe(201);
      await receiver.plan(hook, { secret: created.body.data.signing_secret });
      const start = Date.now();
      const sent = await Promise.all(
        Array.from({ length: 5 }, async (_, i) => {
          await new Promise((r) => setTimeout(r, Math.max(0, start + i * 200 - Date.now())));
          return api.post(`/notifications/webhook-endpoints/${created.body.data.id}/test`, staff);
        }),
      );
      expect(sent.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
      const eventIds = sent.map((r) => r.body.data.event_id as string);
      const received = await receiver.waitFor(hook, eventIds.length, 60_000);
      const arrived = received.map((r) => JSON.parse(r.body).event_id as string).sort();
      expect(arrived).toEqual([...eventIds].sort());

      // The worker's parts are timed in its metrics.
      const metrics = await (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text();
      for (const part of ['temporal_worker', 'database_pool', 'record_statements', 'first_claim_round'])
        expect(metrics).toMatch(new RegExp(`tranche_warm_up_seconds\\{part="${part}"\\} \\d`));
    } finally {
      await db.end();
    }
  }, 240_000);
});
