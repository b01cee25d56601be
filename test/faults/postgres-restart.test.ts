import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeRestartablePort } from './support/restartable-port';
import { spawnPostgres, type PostgresProcess } from './support/postgres-process';
import { startServicePair, type ServicePair } from './support/service-pair';
import { commandsSent, outageSeen } from './support/processes';
import { wireFlowWorld } from './support/subscription-flow';
import { startReceiver } from './support/webhook-receiver';
import { expectDeliveriesSurviveBackoffFault, finishAndExpectRecovered } from './support/recovery';

/**
 * PostgreSQL (embedded, persistent data) restarted while commands are in flight. Expected: the
 * projection activity retries until the database is back, the API's pool reconnects, every
 * subscription completes, projections equal workflow state, each event is in the outbox once,
 * every event reaches the webhook endpoint, and no delivery is missing an attempt number; the
 * same for deliveries whose backoff timer was running while the database was away.
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
    port = await freeRestartablePort();
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

    const since = pair.api.logs().length;
    const inFlight = [world.reconcile(subs[0]!.reference_code), world.approve(subs[1]!.id)].map((p) =>
      p.catch((err: Error) => err),
    );
    await commandsSent(pair.api, since, inFlight.length);
    await postgres.stop();
    await outageSeen(pair.baseUrl, 'database');
    postgres = await start();
    await Promise.all(inFlight);

    await finishAndExpectRecovered(world, subs, { databaseUrl, temporalAddress }, receiver);
    expect(pair.workers.map((w) => w.child.exitCode)).toEqual([null]);
    expect(pair.api.child.exitCode).toBeNull();
  }, 300_000);

  it('finishes webhook deliveries whose 30 s backoff spanned a database restart, with attempts 1 and 2 recorded', async () => {
    // Both deliveries wait on their 30 s timer while the database is away.
    await expectDeliveriesSurviveBackoffFault(pair, { databaseUrl, temporalAddress }, async () => {
      await postgres.stop();
      await outageSeen(pair.baseUrl, 'database');
      postgres = await start();
    });
  }, 300_000);
});
