import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';

/**
 * The engine's own ceiling on this server: trivial workflows (one local activity)
 * started and awaited by a client, `inFlight` at a time, for `seconds`. Every delivery design is
 * judged against this number, measured in the same run.
 */
export async function engineCeiling(address: string, seconds: number, inFlight = 100): Promise<number> {
  const taskQueue = `bench-ceiling-${randomUUID()}`;
  const native = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: native,
    taskQueue,
    workflowsPath: require.resolve('./trivial-workflow'),
    activities: { noop: async () => 1 },
    workflowTaskPollerBehavior: { type: 'autoscaling' },
  });
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const run = () => client.workflow.execute('trivialWorkflow', { taskQueue, workflowId: `trivial-${randomUUID()}` });
  try {
    await Promise.all(Array.from({ length: 20 }, run)); // warm-up
    let done = 0;
    const until = Date.now() + seconds * 1000;
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (Date.now() < until) {
          await run();
          done++;
        }
      }),
    );
    return Math.round((done / ((Date.now() - t0) / 1000)) * 10) / 10;
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await native.close();
  }
}
