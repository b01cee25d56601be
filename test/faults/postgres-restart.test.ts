import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../scripts/lib/free-port';
import { spawnPostgres, type PostgresProcess } from './support/postgres-process';
import { startServicePair, type ServicePair } from './support/service-pair';
import { eventually, verdict, WIRE_FLOW_EVENTS, wireFlowWorld } from './support/subscription-flow';
import { settledDeliveries, startReceiver } from './support/webhook-receiver';

/**
 * PostgreSQL (embedded, persistent data) restarted while commands are in flight. Expected: the
 * projection activity retries until the database is back, the API's pool reconnects, every
 * subscription completes, projections equal workflow state, each event is in the outbox once,
 * every event reaches the webhook endpoint, and no delivery is missing an attempt number.
 */
describe('PostgreSQL restarted mid-flow', () => {
  let pair: ServicePair;
  let postgres: PostgresProcess;
  let databaseUrl: string;
  let port: number;
  const temporalAddress = process.env.TEMPORAL_ADDRESS!;
  const dir = mkdtempSync(join(tmpdir(), 'fault-postgres-'));
  // The server runs as the `postgres` user when started by root; it must reach the folder.
  chmodSync(dir, 0o755);
  const start = () => spawnPostgres(join(dir, 'data'), port);

  beforeAll(async () => {
    port = await freePort();
    postgres = await start();
    databaseUrl = postgres.url;
    pair = await startServicePair({ databaseUrl, temporalAddress });
  }, 300_000);
  afterAll(async () => {
    await pair?.stop();
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finishes every subscription once the database is back, with no event lost or doubled', async () => {
    const world = await wireFlowWorld({ baseUrl: pair.baseUrl, pem: pair.pem, databaseUrl });
    const receiver = await startReceiver(pair.baseUrl, world.tokens.staff);
    const subs = [await world.toReview(), await world.toReview()];
    expect((await world.approve(subs[0]!.id)).status).toBe('approved');

    const inFlight = [world.reconcile(subs[0]!.reference_code), world.approve(subs[1]!.id)].map((p) => p.catch((err: Error) => err));
    await new Promise((r) => setTimeout(r, 100));
    await postgres.stop();
    await new Promise((r) => setTimeout(r, 3000));
    postgres = await start();
    await Promise.all(inFlight);

    for (const s of subs) {
      await eventually('approve', async () => ((await world.get(s.id)).status === 'pending_review' ? world.approve(s.id) : undefined));
      await eventually('reconcile', async () => ((await world.get(s.id)).status === 'approved' ? world.reconcile(s.reference_code) : undefined));
    }
    const verdicts = await Promise.all(subs.map((s) => verdict({ databaseUrl, temporalAddress }, s.id)));
    for (const v of verdicts) {
      expect(v).toEqual({ status: 'completed', projectionEqualsWorkflow: true, eventCounts: Object.fromEntries(WIRE_FLOW_EVENTS.map((t) => [t, 1])) });
    }
    // Every event reached the endpoint at least once, and every delivery's attempts are numbered 1..n.
    const deliveries = await settledDeliveries(databaseUrl, receiver.received, subs.map((s) => s.id));
    await receiver.close();
    expect(deliveries).toEqual(subs.map(() => ({ undelivered: [], attemptGaps: [] })));
    expect(pair.workers.map((w) => w.child.exitCode)).toEqual([null]);
    expect(pair.api.child.exitCode).toBeNull();
  }, 300_000);
});
