import { chmodSync, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { endpointStore, publishEvents, secretBoxFrom } from '../../webhooks';
import { openOrm, type Orm } from '../../db/orm';
import { loadConfig } from '../../lib/runtime/config';
import { freeRestartablePort } from './support/restartable-port';
import { startTemporalDevServer, type RunningTemporal } from '../../scripts/lib/temporal-dev-server';
import { startCountingSink } from './support/counting-sink';
import { spawnPostgres, type PostgresProcess } from './support/postgres-process';
import { startServicePair, type ServicePair } from './support/service-pair';
import { until as waitUntil } from '../support/wait';

const ENDPOINTS = 10;
// x 10 endpoints: 300 deliveries/s offered, so that the rate sustained through the faults (their
// outages included) stays above 200/s; the test prints it.
const EVENTS_PER_S = 30;
// Faults strike when the sink has counted this many deliveries: observed states, not times.
const KILL_WORKER_AT = 1500;
const KILL_TEMPORAL_AT = 3750;
const STOP_POSTGRES_AT = 6000;
const STOP_PUBLISHING_AT = 9000;
// Another organisation's endpoint that never answers, sent to all along.
const HANGING_EVENTS_PER_S = 5;

/**
 * The delivery engine under load (docs/decisions/0157-load-fault-test.md): 30 events/s to 10 endpoints each
 * while a worker is killed, the Temporal server is killed and restarted, and PostgreSQL is stopped and
 * started, and another organisation sends 5 events/s to an endpoint that never answers. Afterwards every
 * committed event has exactly its 10 deliveries, every one a success, each received, and each delivery's
 * attempts numbered 1..n with every result recorded; every event to the hanging endpoint has its delivery,
 * failed and waiting on its retry schedule, none lost.
 */
describe('deliveries under load through a worker crash, a Temporal crash and a PostgreSQL stop', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fault-load-'));
  chmodSync(dir, 0o755);
  let postgres: PostgresProcess;
  let temporal: RunningTemporal;
  let pair: ServicePair;
  let orm: Orm;
  let connection: Connection;
  let pgPort: number;
  const startPostgres = () => spawnPostgres(join(dir, 'pg'), pgPort);
  const startTemporal = (port: number) =>
    startTemporalDevServer({
      binary: process.env.TEMPORAL_CLI!,
      port,
      dbFile: join(dir, 'temporal.db'),
      logFile: createWriteStream(join(dir, 'temporal.log'), { flags: 'a' }),
    });

  beforeAll(async () => {
    pgPort = await freeRestartablePort();
    [postgres, temporal] = await Promise.all([startPostgres(), startTemporal(await freeRestartablePort())]);
    pair = await startServicePair({ databaseUrl: postgres.url, temporalAddress: temporal.address });
  }, 300_000);
  afterAll(async () => {
    await connection?.close().catch(() => undefined);
    await orm?.close();
    await pair?.stop();
    await temporal?.stop();
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Waits for an observed state; a worker that dies meanwhile fails the test at once, with its log. */
  const until = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 300_000) =>
    waitUntil(
      what,
      () => {
        const dead = pair.workers.find((w) => w.child.exitCode !== null && w.child.signalCode !== 'SIGKILL');
        if (dead) throw new Error(`${dead.name} exited while waiting for ${what}:\n${dead.logs().slice(-4000)}`);
        return check();
      },
      { timeoutMs },
    ).catch((err: Error) => {
      throw err.message.startsWith('timed out') ? new Error(`${err.message}:\n${pair.logs().slice(-4000)}`) : err;
    });

  it('loses, doubles and misnumbers nothing', async () => {
    const config = loadConfig({ ...pair.env, LOG_LEVEL: 'fatal' });
    orm = await openOrm(config);
    connection = await Connection.connect({ address: temporal.address });
    // This process publishes as the API does: one statement, answered at commit.
    const knex = orm.em.getConnection().getKnex();
    const publish = (event: Parameters<typeof publishEvents>[1][number]) =>
      publishEvents(knex, [event], { set: config.BEHAVIOUR_SET });
    const sink = await startCountingSink();
    const store = endpointStore(orm, secretBoxFrom(config));
    const orgId = randomUUID();
    for (let i = 0; i < ENDPOINTS; i++) {
      const hook = `load-${i}`;
      const { secret } = await store.create(orgId, {
        url: `${sink.base}/h/${hook}`,
        description: hook,
        eventTypes: ['*'],
      });
      sink.secret(hook, secret);
    }
    const hangingOrg = randomUUID();
    await store.create(hangingOrg, { url: sink.hangingUrl('never'), description: 'never answers', eventTypes: ['*'] });
    const hangingCommitted: string[] = [];

    const committed: string[] = [];
    let refused = 0;
    let publishing = true;
    const publishes: Promise<unknown>[] = [];
    const started = Date.now();
    const publisher = (async () => {
      for (let i = 0; publishing; i++) {
        const due = started + (i * 1000) / EVENTS_PER_S;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
        const event = {
          id: randomUUID(),
          type: 'subscription.approved',
          source: 'service.issuance',
          orgId,
          occurredAt: new Date().toISOString(),
          data: { n: i },
        };
        // Not awaited in turn: the offered rate holds even while a commit waits on a fault.
        publishes.push(
          publish(event).then(
            () => committed.push(event.id),
            () => refused++, // PostgreSQL away: never committed, so never owed
          ),
        );
        if (i % (EVENTS_PER_S / HANGING_EVENTS_PER_S) === 0) {
          const other = { ...event, id: randomUUID(), orgId: hangingOrg };
          publishes.push(
            publish(other).then(
              () => hangingCommitted.push(other.id),
              () => refused++,
            ),
          );
        }
      }
    })();

    await until('deliveries before the worker crash', () => sink.total() >= KILL_WORKER_AT);
    await pair.workers[0]!.kill9();
    await pair.addWorker();

    await until('deliveries before the Temporal crash', () => sink.total() >= KILL_TEMPORAL_AT);
    const temporalPort = Number(temporal.address.split(':')[1]);
    temporal.process.kill('SIGKILL');
    await new Promise((r) => temporal.process.once('exit', r));
    temporal = await startTemporal(temporalPort);

    await until('deliveries before the PostgreSQL stop', () => sink.total() >= STOP_POSTGRES_AT);
    await postgres.stop();
    const refusedBefore = refused;
    await until('publishes refused while PostgreSQL is away', () => refused >= refusedBefore + 40);
    postgres = await startPostgres();

    await until('deliveries after the faults', () => sink.total() >= STOP_PUBLISHING_AT);
    publishing = false;
    await publisher;
    await Promise.all(publishes);
    const seconds = (Date.now() - started) / 1000;

    const owed = committed.length * ENDPOINTS;
    await until(
      'every delivery a success',
      async () => {
        const [row] = await knex('webhook_deliveries')
          .where({ org_id: orgId, status: 'success' })
          .count<{ count: string }[]>('* as count');
        return Number(row!.count) >= owed;
      },
      600_000,
    );

    const deliveries: { id: string; event_id: string; status: string; attempt_count: number }[] = await knex(
      'webhook_deliveries',
    )
      .where({ org_id: orgId })
      .select('id', 'event_id', 'status', 'attempt_count');
    const perEvent = new Map<string, number>();
    for (const d of deliveries) perEvent.set(d.event_id, (perEvent.get(d.event_id) ?? 0) + 1);
    expect(committed.filter((id) => perEvent.get(id) !== ENDPOINTS)).toEqual([]);
    expect(deliveries).toHaveLength(owed);
    expect(deliveries.filter((d) => d.status !== 'success')).toEqual([]);
    expect(deliveries.filter((d) => sink.received(d.id) === 0).map((d) => d.id)).toEqual([]);

    const attempts: { delivery_id: string; number: number; duration_ms: number | null }[] = await knex(
      'webhook_attempts',
    )
      .whereIn('delivery_id', knex('webhook_deliveries').where({ org_id: orgId }).select('id'))
      .orderBy(['delivery_id', 'number'])
      .select('delivery_id', 'number', 'duration_ms');
    const numbers = new Map<string, number[]>();
    for (const a of attempts) numbers.set(a.delivery_id, [...(numbers.get(a.delivery_id) ?? []), a.number]);
    const misnumbered = deliveries.filter(
      (d) =>
        JSON.stringify(numbers.get(d.id)) !== JSON.stringify(Array.from({ length: d.attempt_count }, (_, i) => i + 1)),
    );
    expect(misnumbered).toEqual([]);
    expect(attempts.filter((a) => a.duration_ms === null)).toEqual([]);
    expect(sink.bad()).toBe(0);

    // The hanging endpoint: a delivery for every committed event, each recorded, none a success.
    const hung: { event_id: string; status: string; attempt_count: number }[] = await knex('webhook_deliveries')
      .where({ org_id: hangingOrg })
      .select('event_id', 'status', 'attempt_count');
    expect(hung.map((d) => d.event_id).sort()).toEqual([...hangingCommitted].sort());
    expect(hung.filter((d) => d.status === 'success')).toEqual([]);
    expect(sink.hanging()).toBeGreaterThan(0);
    console.log({
      committed: committed.length,
      refused,
      deliveries: owed,
      received: sink.total(),
      seconds: Math.round(seconds),
      offered_deliveries_per_s: EVENTS_PER_S * ENDPOINTS,
      sustained_deliveries_per_s: Math.round(owed / seconds),
      retried: deliveries.filter((d) => d.attempt_count > 1).length,
      hanging_endpoint: { events: hangingCommitted.length, requests_held: sink.hanging() },
    });
    await sink.close();
  }, 1_200_000);
});
