import { chmodSync, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { Connection } from '@temporalio/client';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Cluster } from '../../scripts/lib/cluster-options';
import { startCluster } from '../../scripts/lib/cluster-stack';
import { freePort, freePortRange } from '../../scripts/lib/free-port';
import { serviceRoleOn, spawnPostgres, type PostgresProcess } from '../faults/support/postgres-process';
import { finishAndExpectRecovered } from '../faults/support/recovery';
import { THROUGH_A_RESTART, wireFlowWorld } from '../faults/support/subscription-flow';
import { eventually } from '../support/wait';
import { startReceiver } from '../faults/support/webhook-receiver';

/**
 * The shape `npm run cluster` runs (scripts/lib/cluster-stack.ts): its own PostgreSQL (a process of its
 * own, so it can restart) holding Temporal's
 * databases and the service's, the full Temporal server, two workers and two API instances behind
 * one balancer port. Each fault strikes while commands are in flight through the balancer; after
 * each, every subscription completes, its projection equals its workflow, each event is in the
 * outbox once and reaches the endpoint with no attempt missing (test/faults/support/recovery.ts).
 */
describe('the production shape: full Temporal server on PostgreSQL, two workers, two API instances', () => {
  let cluster: Cluster;
  let postgres: PostgresProcess;
  let pgPort: number;
  let apiPorts: number[];
  const dir = mkdtempSync(join(tmpdir(), 'cluster-'));
  // The server runs as the `postgres` user when started by root; it must reach the folder.
  chmodSync(dir, 0o755);
  const startPostgres = () => spawnPostgres(join(dir, 'pg'), pgPort);

  beforeAll(async () => {
    pgPort = await freePort();
    apiPorts = [await freePort(), await freePort()];
    postgres = await startPostgres();
    // The production shape serves as a row-rights role and migrates as the owner (docs/decisions/0265).
    const service = await serviceRoleOn(postgres.url);
    cluster = await startCluster({
      databaseUrl: service,
      migrationUrl: postgres.url,
      dataDir: dir,
      port: await freePort(),
      apiPorts,
      workers: 2,
      temporalPortBase: await freePortRange(210),
      pgPort,
      temporalServerDir: process.env.TEMPORAL_SERVER_DIR!,
      compiled: false,
      // One test client writes in bursts; webhook receivers listen on loopback over plain http.
      // The run's payload keyring, so this test's own Temporal client reads what the services seal.
      env: {
        WRITE_RATE_LIMIT: '1000000',
        WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
        LOG_LEVEL: 'info',
        TEMPORAL_PAYLOAD_KEYS: process.env.TEMPORAL_PAYLOAD_KEYS!,
      },
      output: createWriteStream(join(dir, 'cluster.log'), { flags: 'a' }),
    });
  }, 600_000);
  afterAll(async () => {
    await cluster?.stop();
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const world = () =>
    wireFlowWorld({
      baseUrl: cluster.baseUrl,
      pem: cluster.env.ACCESS_TOKEN_PRIVATE_KEY!,
      databaseUrl: cluster.databaseUrl,
    });
  const stack = () => ({ databaseUrl: cluster.databaseUrl, temporalAddress: cluster.temporalAddress });
  /**
   * Every process serving: each API answers /ready, each worker (its pid in the SDK's default
   * identity) polls the task queue. A process restarted by the test before is still starting on a
   * loaded machine; one that meets a dead Temporal server before it has connected would wait for it
   * (docs/decisions/0338-dependencies-awaited-at-start.md), so a strike then would test its start-up
   * wait, not the outage of a serving process.
   */
  async function allServing(): Promise<void> {
    const connection = await Connection.connect({ address: cluster.temporalAddress });
    try {
      await eventually(
        'every worker polling and every API instance ready',
        async () => {
          for (const port of apiPorts)
            expect((await fetch(`http://127.0.0.1:${port}/ready`, { signal: AbortSignal.timeout(2000) })).status).toBe(
              200,
            );
          const { pollers } = await connection.workflowService.describeTaskQueue({
            namespace: cluster.env.TEMPORAL_NAMESPACE ?? 'default',
            taskQueue: { name: cluster.env.TEMPORAL_TASK_QUEUE ?? 'tranche' },
            taskQueueType: 1, // workflow tasks
          });
          const polling = new Set((pollers ?? []).map((p) => p.identity?.split('@')[0]));
          for (const w of cluster.workers) expect(polling.has(String(w.child?.pid))).toBe(true);
        },
        THROUGH_A_RESTART,
      );
    } finally {
      await connection.close();
    }
  }

  const alive = (p: { child: { exitCode: number | null; signalCode: string | null } | null }) =>
    p.child !== null && p.child.exitCode === null && p.child.signalCode === null;

  it('completes a wire subscription end to end through the one port', async () => {
    const w = await world();
    const receiver = await startReceiver(cluster.baseUrl, w.tokens.staff);
    const subs = [await w.toReview(), await w.toReview()];
    await finishAndExpectRecovered(w, subs, stack(), receiver);
  }, 300_000);

  it('loses nothing when one worker is killed under load', async () => {
    const w = await world();
    const receiver = await startReceiver(cluster.baseUrl, w.tokens.staff);
    const subs = [await w.toReview(), await w.toReview(), await w.toReview(), await w.toReview()];
    const inFlight = subs.map((s) => w.approve(s.id).catch((err: Error) => err));
    // Strike once the first approval has landed: the rest are being worked on.
    await eventually(
      'an approval landed',
      async () => expect((await w.get(subs[0]!.id)).status).toBe('approved'),
      THROUGH_A_RESTART,
    );
    await cluster.workers[0]!.kill9();
    await Promise.all(inFlight);
    await finishAndExpectRecovered(w, subs, stack(), receiver);
    expect(alive(cluster.workers[1]!)).toBe(true);
    cluster.workers[0]!.start();
  }, 300_000);

  it('loses nothing when one API instance is killed; the other keeps answering on the same port', async () => {
    const w = await world();
    const receiver = await startReceiver(cluster.baseUrl, w.tokens.staff);
    const subs = [await w.toReview(), await w.toReview(), await w.toReview()];
    const inFlight = subs.map((s) => w.approve(s.id).catch((err: Error) => err));
    await cluster.apis[0]!.kill9();
    await Promise.all(inFlight);
    // A command cut off with its instance is sent again by the client; none is applied twice.
    await finishAndExpectRecovered(w, subs, stack(), receiver);
    expect(alive(cluster.apis[1]!)).toBe(true);
    cluster.apis[0]!.start();
  }, 300_000);

  it('loses nothing when the Temporal server is killed and restarted', async () => {
    await allServing();
    const w = await world();
    const receiver = await startReceiver(cluster.baseUrl, w.tokens.staff);
    const subs = [await w.toReview(), await w.toReview(), await w.toReview()];
    const inFlight = subs.map((s) => w.approve(s.id).catch((err: Error) => err));
    await eventually(
      'an approval landed',
      async () => expect((await w.get(subs[0]!.id)).status).toBe('approved'),
      THROUGH_A_RESTART,
    );
    await cluster.killTemporal();
    await cluster.startTemporal();
    await Promise.all(inFlight);
    await finishAndExpectRecovered(w, subs, stack(), receiver);
    expect([...cluster.workers, ...cluster.apis].every(alive)).toBe(true);
  }, 400_000);

  it('loses nothing when PostgreSQL (Temporal and the service both) restarts', async () => {
    await allServing();
    const w = await world();
    const receiver = await startReceiver(cluster.baseUrl, w.tokens.staff);
    const subs = [await w.toReview(), await w.toReview()];
    const inFlight = subs.map((s) => w.approve(s.id).catch((err: Error) => err));
    await eventually(
      'an approval landed',
      async () => expect((await w.get(subs[0]!.id)).status).toBe('approved'),
      THROUGH_A_RESTART,
    );
    await postgres.stop();
    postgres = await startPostgres();
    await Promise.all(inFlight);
    await finishAndExpectRecovered(w, subs, stack(), receiver);
    expect([...cluster.workers, ...cluster.apis].every(alive)).toBe(true);
  }, 400_000);
});
