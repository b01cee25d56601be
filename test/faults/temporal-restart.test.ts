import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeRestartablePort } from './support/restartable-port';
import { startTemporalDevServer, type RunningTemporal } from '../../scripts/lib/temporal-dev-server';
import { freshDatabase } from '../support/service';
import { startServicePair, type ServicePair } from './support/service-pair';
import { commandsSent, outageSeen } from './support/processes';
import { wireFlowWorld } from './support/subscription-flow';
import { startReceiver } from './support/webhook-receiver';
import { expectDeliveriesSurviveBackoffFault, finishAndExpectRecovered } from './support/recovery';

/**
 * The Temporal dev server (SQLite file persistence) killed with SIGKILL while commands are in
 * flight, then started again on the same file.
 * Expected: worker and API reconnect by themselves; every subscription completes; projections
 * equal workflow state; each event is in the outbox exactly once; every event reaches the webhook
 * endpoint, and no delivery is missing an attempt number. The same holds for webhook deliveries
 * whose backoff timer was running when the server died.
 */
describe('the Temporal server restarted mid-flow', () => {
  let pair: ServicePair;
  let temporal: RunningTemporal;
  let databaseUrl: string;
  let temporalAddress: string;
  const dir = mkdtempSync(join(tmpdir(), 'fault-temporal-'));
  const start = (port: number) =>
    startTemporalDevServer({
      binary: process.env.TEMPORAL_CLI!,
      port,
      dbFile: join(dir, 'temporal.db'),
      logFile: createWriteStream(join(dir, 'temporal.log'), { flags: 'a' }),
    });

  beforeAll(async () => {
    temporal = await start(await freeRestartablePort());
    temporalAddress = temporal.address;
    databaseUrl = await freshDatabase();
    pair = await startServicePair({ databaseUrl, temporalAddress });
  }, 300_000);
  afterAll(async () => {
    await pair?.stop();
    await temporal?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finishes every subscription once the server is back, with no event lost or doubled', async () => {
    const world = await wireFlowWorld({ baseUrl: pair.baseUrl, pem: pair.pem, databaseUrl });
    const receiver = await startReceiver(pair.baseUrl, world.tokens.staff);
    const subs = [await world.toReview(), await world.toReview(), await world.toReview(), await world.toReview()];
    const approved = await world.approve(subs[0]!.id);
    expect(approved.status).toBe('approved');

    const since = pair.api.logs().length;
    const inFlight = [world.reconcile(subs[0]!.reference_code), ...subs.slice(1).map((s) => world.approve(s.id))].map(
      (p) => p.catch((err: Error) => err),
    );
    await commandsSent(pair.api, since, inFlight.length);
    const port = Number(temporalAddress.split(':')[1]);
    // A crash, not a shutdown: workflow tasks in flight are lost and run again after the restart.
    temporal.process.kill('SIGKILL');
    await new Promise((r) => temporal.process.once('exit', r));
    await outageSeen(pair.baseUrl, 'temporal');
    temporal = await start(port);
    await Promise.all(inFlight);

    await finishAndExpectRecovered(world, subs, { databaseUrl, temporalAddress }, receiver);
    // The same processes carried on: nobody restarted the worker or the API.
    expect(pair.workers.map((w) => w.child.exitCode)).toEqual([null]);
    expect(pair.api.child.exitCode).toBeNull();
  }, 300_000);

  it('finishes webhook deliveries whose 30 s backoff spanned a server crash, with attempts 1 and 2 recorded', async () => {
    // Both deliveries wait on their 30 s timer while the server crashes.
    await expectDeliveriesSurviveBackoffFault(pair, { databaseUrl, temporalAddress }, async () => {
      const port = Number(temporalAddress.split(':')[1]);
      temporal.process.kill('SIGKILL');
      await new Promise((r) => temporal.process.once('exit', r));
      await outageSeen(pair.baseUrl, 'temporal');
      temporal = await start(port);
    });
  }, 300_000);
});
