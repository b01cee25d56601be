import { testDataConverter } from '../support/data-converter';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { RETENTION_WORKFLOW, retentionScheduleId } from '../../domain/retention-messages';
import { embeddedDefaults } from '../../scripts/lib/embedded-defaults';
import { freePort } from '../../scripts/lib/free-port';
import { stopProcess } from '../../scripts/lib/temporal-dev-server';
import { freshDatabase } from '../support/service';
import { eventually, until } from '../support/wait';

const root = join(__dirname, '..', '..');

/**
 * "Metrics by default": `npm start` (scripts/dev.ts) serves the API's and the worker's
 * /metrics on documented local ports, unless the variables are already set.
 */
describe('metrics on by default under npm start', () => {
  it('adds the documented ports, and a port already set wins', () => {
    expect(embeddedDefaults({})).toMatchObject({
      METRICS_PORT: '9464',
      WORKER_METRICS_PORT: '9465',
      TEMPORAL_METRICS_PORT: '9466',
    });
    expect(
      embeddedDefaults({ METRICS_PORT: '19464', WORKER_METRICS_PORT: '19465', TEMPORAL_METRICS_PORT: '19466' }),
    ).toMatchObject({ METRICS_PORT: '19464', WORKER_METRICS_PORT: '19465', TEMPORAL_METRICS_PORT: '19466' });
  });

  describe('the worker and the API with what npm start adds', () => {
    const children: ChildProcess[] = [];
    const ports: Record<string, string> = {};
    const taskQueue = `metrics-${randomUUID()}`;

    beforeAll(async () => {
      // Ports of their own (someone's `npm start` may hold 9464-9466), passed as already set.
      for (const name of ['METRICS_PORT', 'WORKER_METRICS_PORT', 'TEMPORAL_METRICS_PORT'])
        ports[name] = String(await freePort());
      const port = await freePort();
      const env = {
        ...process.env,
        NODE_ENV: 'development',
        LOG_LEVEL: 'warn',
        DATABASE_URL: await freshDatabase(),
        TEMPORAL_TASK_QUEUE: taskQueue,
        PORT: String(port),
        ...embeddedDefaults(ports),
      };
      for (const file of ['worker/main.ts', 'server/main.ts'])
        children.push(spawn(process.execPath, ['--import', 'tsx', join(root, file)], { env, stdio: 'ignore' }));
    }, 60_000);
    afterAll(async () => {
      await Promise.all(children.map((c) => stopProcess(c)));
    });

    it.each([
      ['API', 'METRICS_PORT', 'tranche_process_resident_memory_bytes'],
      ['worker', 'WORKER_METRICS_PORT', 'tranche_process_resident_memory_bytes'],
      ['Temporal SDK', 'TEMPORAL_METRICS_PORT', 'temporal_'],
    ])(
      'serves the %s metrics',
      async (_name, variable, expected) => {
        const url = `http://127.0.0.1:${ports[variable]}/metrics`;
        const scrape = () =>
          fetch(url).then(
            (r) => (r.ok ? r.text() : ''),
            () => '',
          );
        const text = await until(`${url} to show ${expected}`, scrape, (t) => t.includes(expected), {
          timeoutMs: 90_000,
          intervalMs: 500,
        });
        expect(text).toContain(expected);
      },
      100_000,
    );

    it("has ensured the retention prune's schedule on its task queue", async () => {
      const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
      const handle = new Client({ connection, dataConverter: testDataConverter() }).schedule.getHandle(
        retentionScheduleId(taskQueue),
      );
      try {
        const described = await eventually('the retention schedule', () => handle.describe(), {
          timeoutMs: 60_000,
          intervalMs: 500,
        });
        expect(described?.action).toMatchObject({ workflowType: RETENTION_WORKFLOW, taskQueue });
        expect(described?.spec.intervals).toEqual([expect.objectContaining({ every: 10 * 60_000 })]);
      } finally {
        await handle.delete().catch(() => undefined);
        await connection.close();
      }
    }, 70_000);
  });
});
