import { chmodSync, createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { subscriptionWorkflowId } from '../../domain/subscription';
import type { BehaviourSet } from '../../lib/behaviour-set';
import type { Cluster } from '../../scripts/lib/cluster-options';
import { startCluster } from '../../scripts/lib/cluster-stack';
import { freePort, freePortRange } from '../../scripts/lib/free-port';
import { migrateAsOwner } from '../../scripts/lib/migrate-as-owner';
import { serviceRoleOn, spawnPostgres, type PostgresProcess } from '../faults/support/postgres-process';
import { Receiver } from '../webhooks/support/receiver';
import { Answers } from '../upgrade/support/answers';
import { builds, type Build } from '../upgrade/support/builds';
import { roll, type RollLog } from '../upgrade/support/roll';
import { startGroup, type ServiceGroup } from '../upgrade/support/service-group';
import { subscriptionDriver, WAITING, type SubscriptionDriver } from '../upgrade/support/subscription-driver';
import { webhookTraffic, type WebhookTraffic } from '../upgrade/support/webhook-traffic';
import { auditWorkflowTasks } from '../upgrade/support/workflow-tasks';
import { rollbackBarrier } from '../upgrade/support/rollback-barrier';

/**
 * A rolling upgrade of the production shape and its rollback (docs/decisions/0388-the-previous-release.md):
 * the full Temporal server on PostgreSQL and, per behaviour set, two workers and two API instances behind a
 * balancer (Set A delivering in `engine` shape, Set B in `workflow` shape), started on the previous release
 * built from git. Subscriptions of both sets wait in every waiting state while test pings flow; the schema is
 * migrated to today's while the previous release serves, and the previous release's processes start on it;
 * then one worker and one API instance at a time are replaced by this build, and every subscription
 * completes on it. Then the same the other way. Through both: no API answer of 5xx, no workflow task failed,
 * every delivery arrives. UPGRADE_PER_STATE and UPGRADE_PINGS_PER_SECOND scale it (npm run upgrade-check).
 */
const PER_STATE = Number(process.env.UPGRADE_PER_STATE ?? 1);
const PINGS_PER_SECOND = Number(process.env.UPGRADE_PINGS_PER_SECOND ?? 2);
const SETS: { set: BehaviourSet; shape: 'engine' | 'workflow' }[] = [
  { set: 'A', shape: 'engine' },
  { set: 'B', shape: 'workflow' },
];

describe('a rolling upgrade from the previous release, and a rollback', () => {
  const dir = mkdtempSync(join(tmpdir(), 'upgrade-'));
  chmodSync(dir, 0o755); // PostgreSQL runs as its own user when root starts it
  const answers = new Answers();
  const log: RollLog = [];
  const report: Record<string, unknown> = {};
  let previous: Build;
  let current: Build;
  let postgres: PostgresProcess;
  let cluster: Cluster;
  let receiver: Receiver;
  const groups = new Map<BehaviourSet, ServiceGroup>();
  const drivers = new Map<BehaviourSet, SubscriptionDriver>();
  const traffic = new Map<BehaviourSet, WebhookTraffic>();
  const namespace = 'default';

  /** perState subscriptions of each set in each waiting state: their ids by set. */
  async function inEveryWaitingState(): Promise<Map<BehaviourSet, string[]>> {
    const made = new Map<BehaviourSet, string[]>();
    await Promise.all(
      SETS.map(async ({ set }) => {
        const ids: string[] = [];
        for (const state of WAITING) for (let i = 0; i < PER_STATE; i++) ids.push(await drivers.get(set)!.to(state));
        made.set(set, ids);
      }),
    );
    return made;
  }

  /** Finishes every subscription; answers how many there were and whom their last workflow task ran on. */
  async function completeAll(ids: Map<BehaviourSet, string[]>, build: Build) {
    for (const { set } of SETS) for (const id of ids.get(set)!) await drivers.get(set)!.finish(id);
    const audit = await auditWorkflowTasks(cluster.temporalAddress);
    const expected = build.versioned ? build.buildId : 'unversioned';
    const elsewhere = SETS.flatMap(({ set }) =>
      ids
        .get(set)!
        .map((id) => [id, audit.lastBuild.get(subscriptionWorkflowId(id))] as const)
        .filter(([, last]) => last !== expected),
    );
    return { audit, elsewhere, count: SETS.reduce((n, { set }) => n + ids.get(set)!.length, 0) };
  }

  async function deliveries() {
    const out: Record<string, unknown> = {};
    for (const { set } of SETS)
      out[set] = { pingsSent: traffic.get(set)!.pingsSent(), ...(await traffic.get(set)!.allArrived()) };
    return out as Record<BehaviourSet, { missing: string[] }>;
  }

  beforeAll(async () => {
    ({ previous, current } = builds({ compiled: true }));
    report.builds = { previous: previous.buildId, current: current.buildId };
    const pgPort = await freePort();
    postgres = await spawnPostgres(join(dir, 'pg'), pgPort);
    const output = createWriteStream(join(dir, 'cluster.log'), { flags: 'a' });
    cluster = await startCluster({
      databaseUrl: await serviceRoleOn(postgres.url),
      migrationUrl: postgres.url,
      dataDir: dir,
      port: await freePort(),
      apiPorts: [],
      workers: 0,
      temporalPortBase: await freePortRange(210),
      pgPort,
      temporalServerDir: process.env.TEMPORAL_SERVER_DIR!,
      compiled: true,
      release: previous.release,
      promote: false,
      env: { WRITE_RATE_LIMIT: '1000000', WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true', LOG_LEVEL: 'info' },
      output,
    });
    receiver = await Receiver.start();
    for (const { set, shape } of SETS) {
      const group = await startGroup({
        set,
        superuserUrl: postgres.url,
        clusterEnv: cluster.env,
        env: { WEBHOOK_DELIVERY_SHAPE: shape },
        build: previous,
        workers: 2,
        apis: 2,
        output,
      });
      groups.set(set, group);
      const driver = await subscriptionDriver(group, answers);
      drivers.set(set, driver);
      traffic.set(
        set,
        await webhookTraffic({
          group,
          answers,
          receiver,
          staff: driver.staff,
          perSecond: PINGS_PER_SECOND,
          failFirst: 3,
        }),
      );
    }
  }, 1_800_000);

  afterAll(async () => {
    await Promise.all([...traffic.values()].map((t) => t.stop()));
    report.answers = answers.byStatus();
    report.roll = log;
    mkdirSync('test-output', { recursive: true });
    writeFileSync(join('test-output', 'upgrade-check.json'), JSON.stringify(report, null, 2));
    console.log(`rolling upgrade (${join(dir, 'cluster.log')}):\n${JSON.stringify(report, null, 2)}`);
    await Promise.all([...groups.values()].map((g) => g.stop()));
    await cluster?.stop();
    await postgres?.stop();
    await receiver?.stop();
    if (!process.env.UPGRADE_KEEP) rmSync(dir, { recursive: true, force: true });
  }, 300_000);

  let forward: Map<BehaviourSet, string[]>;

  it('rolls this build in, one worker and one API instance at a time, while subscriptions wait and webhooks flow', async () => {
    forward = await inEveryWaitingState();
    report.forward = { subscriptionsInFlight: SETS.map(({ set }) => `${set}: ${forward.get(set)!.length}`) };
    // Today's migrations while the previous release serves; then its processes start on that schema.
    for (const g of groups.values()) await migrateAsOwner(g.ownerUrl);
    log.push(`${new Date().toISOString()} schema migrated to the current build's`);
    for (const g of groups.values()) {
      await g.replaceApi(0, previous);
      const fresh = await g.addWorker(previous);
      await g.removeWorker(g.workers[0]!);
      log.push(
        `${new Date().toISOString()} ${g.set}: previous release's API instance and worker (${fresh.process.name}) restarted on the migrated schema`,
      );
    }
    // The previous release's smoke on that schema: one more subscription to review through it.
    const smoke = await Promise.all(SETS.map(({ set }) => drivers.get(set)!.to('pending_review')));
    SETS.forEach(({ set }, i) => forward.get(set)!.push(smoke[i]!));
    await Promise.all(
      [...groups.values()].map((group) =>
        roll({ group, to: current, temporalAddress: cluster.temporalAddress, namespace, log }),
      ),
    );
    expect(answers.failures).toEqual([]);
  }, 1_800_000);

  it('completes every subscription on this build, with no workflow task failed and every delivery arrived', async () => {
    const { audit, elsewhere, count } = await completeAll(forward, current);
    const sent = await deliveries();
    report.forward = {
      ...(report.forward as object),
      completed: count,
      workflows: audit.workflows,
      workflowTasks: { failed: audit.failed.length, bookkeeping: audit.bookkeeping, timedOut: audit.timedOut },
      deliveries: sent,
      answers: answers.byStatus(),
    };
    expect(audit.failed).toEqual([]);
    expect(elsewhere).toEqual([]);
    for (const { set } of SETS) expect(sent[set].missing).toEqual([]);
    expect(answers.failures).toEqual([]);
  }, 1_800_000);

  // A release whose patches the previous build cannot replay names them in deploy/rollback-barrier and ships
  // saying it cannot be rolled back past (docs/decisions/0387-versioning-behaviour-per-workflow.md, rule 3;
  // test/replay/release-histories.test.ts checks the list is the whole difference). The rollback is tested
  // again once the previous release knows them, when the list is empty.
  const rollback = rollbackBarrier().length === 0 ? it : it.skip;
  rollback(
    'rolls back to the previous release the same way, and completes there what this build started',
    async () => {
      const back = await inEveryWaitingState();
      // Some of the deliveries this build starts wait for their second attempt, pinned to it, across the rollback.
      for (const t of traffic.values()) await t.failNext(3);
      await Promise.all(
        [...groups.values()].map((group) =>
          roll({ group, to: previous, temporalAddress: cluster.temporalAddress, namespace, log }),
        ),
      );
      const { audit, elsewhere, count } = await completeAll(back, previous);
      const sent = await deliveries();
      report.rollback = {
        subscriptionsInFlight: count,
        workflows: audit.workflows,
        workflowTasks: { failed: audit.failed.length, bookkeeping: audit.bookkeeping, timedOut: audit.timedOut },
        deliveries: sent,
        answers: answers.byStatus(),
      };
      expect(audit.failed).toEqual([]);
      expect(elsewhere).toEqual([]);
      for (const { set } of SETS) expect(sent[set].missing).toEqual([]);
      expect(answers.failures).toEqual([]);
    },
    1_800_000,
  );
});
