import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { freePort } from '../../../scripts/lib/free-port';
import { migrateAsOwner, migrateAsRelease } from '../../../scripts/lib/migrate-as-owner';
import { serviceProcess, type ServiceProcess } from '../../../scripts/lib/service-process';
import { untilReady } from '../../../scripts/lib/until-ready';
import type { BehaviourSet } from '../../../lib/behaviour-set';
import { subscriptionWorkflowId } from '../../../domain/subscription';
import { NOTIFICATION_PATHS } from '../../../api/notifications/paths';
import { until } from '../../support/wait';
import type { Receiver } from '../../webhooks/support/receiver';
import { Answers } from '../../upgrade/support/answers';
import type { Build } from '../../upgrade/support/builds';
import { createDatabase, serviceUrl } from '../../upgrade/support/service-group';
import { subscriptionDriver } from '../../upgrade/support/subscription-driver';

/** The histories a release records: a whole subscription in each set and each delivery shape. */
export const RECORDED = [
  { set: 'A', shape: 'engine' },
  { set: 'A', shape: 'workflow' },
  { set: 'B', shape: 'engine' },
  { set: 'B', shape: 'workflow' },
] as const satisfies readonly { set: BehaviourSet; shape: 'engine' | 'workflow' }[];

/**
 * Runs `build`'s own worker and API (its dist/, or this checkout's source) on the test stack, once per set
 * and delivery shape, drives a whole subscription through it with a webhook endpoint that refuses the first
 * request (so a delivery waits on its retry schedule), and writes the history of every workflow it ran to
 * `out`, one JSON file each, as `temporal workflow show -o json` would
 * (docs/decisions/0390-histories-recorded-by-each-release.md). Payloads are recorded unsealed: a replay
 * needs no key. The schema is the build's own; `onCurrentSchema` then runs this checkout's migrations over
 * it before the build's services start: the previous release's smoke on the schema a roll leaves it
 * (docs/decisions/0389-migrations-expand-then-contract.md). Answers the files written.
 */
export async function recordRelease(o: {
  build: Build;
  out: string;
  receiver: Receiver;
  output: NodeJS.WritableStream;
  onCurrentSchema?: boolean;
}): Promise<string[]> {
  mkdirSync(o.out, { recursive: true });
  const files: string[] = [];
  for (const { set, shape } of RECORDED) files.push(...(await recordOne({ ...o, set, shape })));
  return files;
}

async function recordOne(o: {
  build: Build;
  out: string;
  receiver: Receiver;
  output: NodeJS.WritableStream;
  onCurrentSchema?: boolean;
  set: BehaviourSet;
  shape: 'engine' | 'workflow';
}): Promise<string[]> {
  const tag = `${o.set.toLowerCase()}-${o.shape}`;
  const name = `record_${tag.replace('-', '_')}_${randomBytes(4).toString('hex')}`;
  const ownerUrl = await createDatabase(process.env.TRANCHE_TEST_DATABASE_OWNER_URL!, name);
  if (o.build.release) await migrateAsRelease(o.build.release, ownerUrl);
  if (!o.build.release || o.onCurrentSchema) await migrateAsOwner(ownerUrl);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const taskQueue = `record-${tag}-${randomBytes(4).toString('hex')}`;
  const { TEMPORAL_PAYLOAD_KEYS: _sealed, ...inherited } = process.env;
  const env: Record<string, string> = {
    ...(inherited as Record<string, string>),
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: serviceUrl(ownerUrl),
    DATABASE_MIGRATION_URL: '',
    BEHAVIOUR_SET: o.set,
    WEBHOOK_DELIVERY_SHAPE: o.shape,
    WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
    WRITE_RATE_LIMIT: '1000000',
    TEMPORAL_TASK_QUEUE: taskQueue,
    PORT: String(port),
    PUBLIC_BASE_URL: baseUrl,
    ACCESS_TOKEN_PRIVATE_KEY: generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString(),
    SANDBOX_NOTIFICATION_SECRET: randomBytes(32).toString('hex'),
  };
  const spawned = (entry: 'worker/main' | 'server/main'): ServiceProcess => {
    const p = serviceProcess({
      name: `record-${tag}-${entry.split('/')[0]}-${o.build.name}`,
      entry,
      env,
      compiled: Boolean(o.build.release),
      output: o.output,
      release: o.build.release,
    });
    p.start();
    return p;
  };
  const processes = [spawned('worker/main'), spawned('server/main')];
  try {
    await untilReady(`${baseUrl}/ready`, { withinMs: 180_000 });
    const service = { set: o.set, baseUrl, databaseUrl: env.DATABASE_URL!, env };
    const answers = new Answers();
    const driver = await subscriptionDriver(service, answers);
    const hook = `record-${tag}`;
    const api = answers.client(baseUrl);
    const endpoint = await api.post(`/notifications${NOTIFICATION_PATHS[o.set].endpoints}`, driver.staff, {
      url: o.receiver.url(hook),
      description: hook,
      eventTypes: ['*'],
    });
    if (endpoint.status !== 201) throw new Error(`register: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);
    await o.receiver.plan(hook, { secret: endpoint.body.data.signing_secret, responses: [500], defaultStatus: 204 });
    const id = await driver.to('draft');
    await driver.finish(id);
    // Its events' first attempts have been made (the first refused: that delivery waits for attempt 2).
    await o.receiver.waitFor(hook, 5, 60_000);
    return await exportHistories(o.out, tag, env.TEMPORAL_ADDRESS!, taskQueue, subscriptionWorkflowId(id));
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
  }
}

/** Every workflow of the task queue that has run a task, its history written to `<out>/<tag>-<type>-<n>.json`. */
async function exportHistories(out: string, tag: string, address: string, taskQueue: string, subscription: string) {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    const query = `TaskQueue = '${taskQueue}'`;
    // Visibility lags the runs a little: the subscription's is listed last of all, as it ran longest.
    await until(`${subscription} listed`, async () => {
      for await (const w of client.workflow.list({ query })) if (w.workflowId === subscription) return true;
      return false;
    });
    // The refused first attempt's delivery workflow (engine shape: made once the refusal is recorded) runs
    // a moment after the arrivals are counted; on a loaded host it had not yet (CI: no webhookDeliveryWorkflow).
    await until('a delivery workflow to have run a task', async () => {
      for await (const w of client.workflow.list({ query: `${query} AND WorkflowType = 'webhookDeliveryWorkflow'` })) {
        const history = await client.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
        if (history.events?.some((e) => e.workflowTaskCompletedEventAttributes)) return true;
      }
      return false;
    });
    const files: string[] = [];
    const seen = new Map<string, number>();
    for await (const w of client.workflow.list({ query })) {
      const history = await client.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
      if (!history.events?.some((e) => e.workflowTaskCompletedEventAttributes)) continue;
      const n = (seen.get(w.type) ?? 0) + 1;
      seen.set(w.type, n);
      const file = join(out, `${tag}-${w.type}-${n}.json`);
      writeFileSync(file, historyToJSON(history));
      files.push(file);
    }
    return files;
  } finally {
    await connection.close();
  }
}
