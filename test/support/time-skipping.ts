import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { freePort } from '../../scripts/lib/free-port';
import { until } from './wait';

/** A cold JVM on a loaded machine takes far longer than the SDK's fixed 5 s start window. */
const START_TIMEOUT_MS = 120_000;

type Create = (opts: {
  server: { type: 'existing' };
  address: string;
  supportsTimeSkipping: true;
  namespace: string;
}) => Promise<TestWorkflowEnvironment>;

/**
 * Temporal's Java time-skipping test server (scripts/tools.sh test-server). Started here and waited
 * for (TOOLCHAIN.md: the SDK gives it only about 5 s, which a loaded machine misses), then handed to
 * the SDK as an existing server with its test service, so time skipping works as usual.
 */
export async function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const path = process.env.TEMPORAL_TEST_SERVER;
  if (!path) throw new Error('TEMPORAL_TEST_SERVER is not set: run the tests with `npm test`');
  const port = await freePort();
  const jvm = spawn(path, [String(port)], { stdio: 'ignore' });
  try {
    await listening(port, START_TIMEOUT_MS);
    // The SDK's own factory, as createTimeSkipping calls it, minus the start: it is private in the typings only.
    const create = (TestWorkflowEnvironment as unknown as { create: Create }).create.bind(TestWorkflowEnvironment);
    const env = await create({
      server: { type: 'existing' },
      address: `127.0.0.1:${port}`,
      supportsTimeSkipping: true,
      namespace: 'default',
    });
    const teardown = env.teardown.bind(env);
    env.teardown = async () => {
      await teardown();
      jvm.kill('SIGKILL');
    };
    return env;
  } catch (err) {
    jvm.kill('SIGKILL');
    throw err;
  }
}

async function listening(port: number, timeoutMs: number): Promise<void> {
  const accepts = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  await until(`the time-skipping test server listening on ${port}`, accepts, { timeoutMs, intervalMs: 200 });
}
