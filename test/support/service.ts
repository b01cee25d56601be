import { Client as PgClient } from 'pg';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { loadConfig, type Config } from '../../lib/runtime/config';
import { migrate, openOrm, type Orm } from '../../db/orm';
import { migrateAsOwner } from '../../scripts/lib/migrate-as-owner';
import { ensureAuditCheckpoints } from '../../worker/audit-checkpoints';
import { auditCheckpointWorkflowId } from '../../domain/audit-checkpoint';
import { createApp } from '../../server/app';
import { answerUnparsableRequests } from '../../server/unparsable-requests';
import { AccessTokens } from '../../identity/access-tokens';
import { kycEligibility } from '../../identity/kyc-eligibility';
import { createDeliveryEngine, type RunningEngine } from '../../webhooks';
import { createProcessor } from '../../payments';
import { freePort } from '../../scripts/lib/free-port';
import { createWorker } from '../../worker/create-worker';
import { dataConverterOf } from '../../lib/runtime/payload-codec';
import { clientOn } from '../../lib/runtime/temporal';
import type { BehaviourSet } from '../../lib/behaviour-set';
import type { DeploymentVersion } from '../../lib/runtime/build-id';

export interface TestService {
  set: BehaviourSet;
  config: Config;
  baseUrl: string;
  orm: Orm;
  temporal: Client;
  tokens: AccessTokens;
  worker: Worker;
  /** Stops the worker (commands then go unanswered) and starts a fresh one on the same queue. */
  stopWorker(): Promise<void>;
  startWorker(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The owner's URL of a test database (the test stack's superuser, scripts/with-stack.ts), made from
 * the services' URL of it: the same server and database, the owner's role.
 */
export function ownerUrlOf(serviceUrl: string): string {
  const owner = new URL(process.env.TRANCHE_TEST_DATABASE_OWNER_URL ?? serviceUrl);
  owner.pathname = new URL(serviceUrl).pathname;
  return owner.toString();
}

/**
 * A fresh database on the test PostgreSQL server, made and migrated as its owner, as `npm start`
 * does (docs/decisions/0265); returns the services' URL of it.
 */
export async function freshDatabase(): Promise<string> {
  const service = new URL(process.env.DATABASE_URL!);
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new URL(ownerUrlOf(service.toString()));
  admin.pathname = '/postgres';
  const client = new PgClient({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  service.pathname = `/${name}`;
  await migrateAsOwner(ownerUrlOf(service.toString()));
  return service.toString();
}

/**
 * The whole service for one test file, all real: its own database and task queue on the shared
 * PostgreSQL and Temporal, a worker running the bundled workflows, and the API on a real port.
 */
export async function startService(opts: {
  set: BehaviourSet;
  env?: Record<string, string>;
  /** Start the audit checkpoint workflow, as worker/main.ts does (docs/decisions/0267). */
  auditCheckpoints?: boolean;
  /** The Worker Deployment version the worker polls as; unset, unversioned (docs/decisions/0386). */
  version?: DeploymentVersion;
  /** Run the delivery engine beside the worker (default); false leaves deliveries to one the test runs. */
  engine?: boolean;
}): Promise<TestService> {
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    BEHAVIOUR_SET: opts.set,
    DATABASE_URL: await freshDatabase(),
    TEMPORAL_TASK_QUEUE: `test-${randomBytes(6).toString('hex')}`,
    // A known port, so the URLs the service hands out (payment sessions, callbacks) reach it.
    ...(await ownAddress()),
    // One test user sends many writes in a burst; tests of the write limit set their own.
    WRITE_RATE_LIMIT: '1000000',
    ...opts.env,
  });
  const orm = await openOrm(config);
  await migrate(orm);
  const processor = createProcessor(config, { orm });
  const nativeConnection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const temporal = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter: dataConverterOf(config),
  });
  const engine = createDeliveryEngine({ orm, config });
  const newWorker = () =>
    createWorker({
      config,
      connection: nativeConnection,
      version: opts.version,
      workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
      deps: { orm, processor, engine, config },
    });
  // The worker process's two halves: the Temporal worker and the delivery engine's dispatcher.
  let worker = await newWorker();
  let running: Promise<void> | undefined = worker.run();
  // As the worker process runs it: the engine's client shares the worker's connection (eager starts).
  const engineRun = {
    temporal: clientOn(nativeConnection, config),
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    eagerStarts: true,
  };
  let delivering: RunningEngine | undefined = opts.engine === false ? undefined : await engine.start(engineRun);
  if (opts.auditCheckpoints) await ensureAuditCheckpoints(temporal, config, orm.em.getConnection().getKnex());
  const tokens = await AccessTokens.create({ ttlSeconds: config.ACCESS_TOKEN_TTL_SECONDS });
  const app = createApp({ config, orm, temporal, tokens, kyc: kycEligibility(orm) });
  const server: Server = await new Promise((resolve) => {
    const s = answerUnparsableRequests(app.listen(config.PORT, '127.0.0.1', () => resolve(s)));
  });
  const { port } = server.address() as AddressInfo;

  return {
    set: opts.set,
    config,
    baseUrl: `http://127.0.0.1:${port}`,
    orm,
    temporal,
    tokens,
    get worker() {
      return worker;
    },
    async stopWorker() {
      if (running) {
        worker.shutdown();
        await running;
      }
      running = undefined;
      await delivering?.stop();
      delivering = undefined;
    },
    async startWorker() {
      worker = await newWorker();
      running = worker.run();
      if (opts.engine !== false) delivering = await engine.start(engineRun);
    },
    async stop() {
      await new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await delivering?.stop();
      // A test may have stopped this worker already (a worker restart) and started another.
      if (running && worker.getState() === 'RUNNING') worker.shutdown();
      if (running) await running;
      // Left running, its timer would wake every minute for a queue no worker polls any more.
      if (opts.auditCheckpoints)
        await temporal.workflow
          .getHandle(auditCheckpointWorkflowId(config.TEMPORAL_TASK_QUEUE))
          .terminate('test service stopped')
          .catch(() => undefined);
      await connection.close();
      await nativeConnection.close();
      processor.close?.();
      await orm.close();
    },
  };
}

async function ownAddress(): Promise<{ PORT: string; PUBLIC_BASE_URL: string }> {
  const port = await freePort();
  return { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` };
}
