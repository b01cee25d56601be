import { Client as PgClient } from 'pg';
import { startBalancer, type Balancer } from '../../../scripts/lib/balancer';
import { freePort } from '../../../scripts/lib/free-port';
import { migrateAsRelease } from '../../../scripts/lib/migrate-as-owner';
import { serviceProcess, type ServiceProcess } from '../../../scripts/lib/service-process';
import { untilReady } from '../../../scripts/lib/until-ready';
import type { BehaviourSet } from '../../../lib/behaviour-set';
import type { Build } from './builds';

/** A worker or API instance of a group, with the build it runs. */
interface Slot {
  process: ServiceProcess;
  build: Build;
}

/**
 * One service on the shared production shape: its own database, task queue and Worker Deployment, N
 * workers and M API instances behind a balancer of its own, as `npm run cluster` runs one
 * (scripts/lib/cluster-stack.ts). The rolling-upgrade test runs one per behaviour set.
 */
export interface ServiceGroup {
  set: BehaviourSet;
  baseUrl: string;
  /** The services' URL of its database, and the owner's (migrations). */
  databaseUrl: string;
  ownerUrl: string;
  taskQueue: string;
  deploymentName: string;
  env: Record<string, string>;
  workers: Slot[];
  apis: Slot[];
  /** Starts one more worker of `build` (it polls; it takes tasks once routed to). */
  addWorker(build: Build): Promise<Slot>;
  /** Stops a worker (SIGTERM: it finishes what it runs) and forgets it. */
  removeWorker(slot: Slot): Promise<void>;
  /** Replaces API instance i with one of `build` on the same port; the balancer drains it first and sends to the others meanwhile. */
  replaceApi(i: number, build: Build): Promise<void>;
  stop(): Promise<void>;
}

export async function startGroup(o: {
  set: BehaviourSet;
  /** The PostgreSQL superuser's URL (any database): the group's database is made on that server. */
  superuserUrl: string;
  /** The cluster's environment: Temporal's address, secrets, production. */
  clusterEnv: Record<string, string>;
  env: Record<string, string>;
  build: Build;
  workers: number;
  apis: number;
  output: NodeJS.WritableStream;
}): Promise<ServiceGroup> {
  const name = `tranche_${o.set.toLowerCase()}`;
  const ownerUrl = await createDatabase(o.superuserUrl, name);
  // The schema the first build laid: the previous release's own migrations.
  await migrateAsRelease(o.build.release ?? process.cwd(), ownerUrl);
  const databaseUrl = serviceUrl(ownerUrl);
  const taskQueue = `tranche-${o.set.toLowerCase()}`;
  const deploymentName = `tranche-${o.set.toLowerCase()}`;
  const env: Record<string, string> = {
    ...o.clusterEnv,
    ...o.env,
    BEHAVIOUR_SET: o.set,
    DATABASE_URL: databaseUrl,
    TEMPORAL_TASK_QUEUE: taskQueue,
    WORKER_DEPLOYMENT_NAME: deploymentName,
  };
  const apiPorts = await Promise.all(Array.from({ length: o.apis }, () => freePort()));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  let count = 0;
  const spawnOf = (entry: 'worker/main' | 'server/main', build: Build, extra: Record<string, string> = {}) => {
    const p = serviceProcess({
      name: `${o.set}-${entry === 'worker/main' ? 'worker' : 'api'}-${++count}-${build.name}`,
      entry,
      env: { ...env, ...buildEnv(build), ...extra, PUBLIC_BASE_URL: baseUrl },
      compiled: true,
      output: o.output,
      release: build.release,
    });
    p.start();
    return p;
  };
  const startApi = async (i: number, build: Build): Promise<Slot> => {
    const p = spawnOf('server/main', build, { PORT: String(apiPorts[i]) });
    await untilReady(`http://127.0.0.1:${apiPorts[i]}/ready`, { withinMs: 240_000, exited: () => exited(p) });
    return { process: p, build };
  };
  const workers: Slot[] = Array.from({ length: o.workers }, () => ({
    process: spawnOf('worker/main', o.build),
    build: o.build,
  }));
  const apis: Slot[] = [];
  for (let i = 0; i < o.apis; i++) apis.push(await startApi(i, o.build));
  const balancer: Balancer = await startBalancer({ port, upstreams: apiPorts });
  return {
    set: o.set,
    baseUrl,
    databaseUrl,
    ownerUrl,
    taskQueue,
    deploymentName,
    env,
    workers,
    apis,
    async addWorker(build) {
      const slot = { process: spawnOf('worker/main', build), build };
      workers.push(slot);
      return slot;
    },
    async removeWorker(slot) {
      await slot.process.stop();
      workers.splice(workers.indexOf(slot), 1);
    },
    async replaceApi(i, build) {
      // As an operator does: out of the balancer first, then stopped, replaced, and back in once ready.
      await balancer.drain(apiPorts[i]!);
      await apis[i]!.process.stop();
      apis[i] = await startApi(i, build);
      balancer.restore(apiPorts[i]!);
    },
    async stop() {
      await balancer.close();
      await Promise.all([...apis, ...workers].map((s) => s.process.stop()));
    },
  };
}

/** What a build's processes are told about themselves: its id, and whether its workers are versioned. */
function buildEnv(build: Build): Record<string, string> {
  return build.versioned ? { TRANCHE_BUILD_ID: build.buildId, WORKER_VERSIONING: 'true' } : {};
}

function exited(p: ServiceProcess): string | null {
  const c = p.child;
  return c && (c.exitCode !== null || c.signalCode !== null)
    ? `${p.name} exited (${c.signalCode ?? c.exitCode})`
    : null;
}

/** Makes database `name` on the server (as its superuser) and answers the owner's URL of it. */
export async function createDatabase(superuserUrl: string, name: string): Promise<string> {
  const admin = new URL(superuserUrl);
  admin.pathname = '/postgres';
  const client = new PgClient({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const owner = new URL(superuserUrl);
  owner.pathname = `/${name}`;
  return owner.toString();
}

/** The services' role's URL of the same database (made by serviceRoleOn, test/faults/support/postgres-process.ts). */
export function serviceUrl(ownerUrl: string): string {
  const url = new URL(ownerUrl);
  url.username = 'tranche_app';
  url.password = 'tranche-app';
  return url.toString();
}
