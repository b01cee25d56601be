import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { freePort } from '../../scripts/lib/free-port';

/**
 * Temporal's Java time-skipping test server (scripts/tools.sh test-server), started through its
 * `exec java` wrapper so a kill reaches the JVM. The SDK waits only about 5 s for a server it
 * starts; on a loaded machine a cold JVM misses that, so when it does we start the server
 * ourselves, wait until it listens, and connect to it as the time-skipping server it is.
 */
export async function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const path = process.env.TEMPORAL_TEST_SERVER;
  if (!path) throw new Error('TEMPORAL_TEST_SERVER is not set: run the tests with `npm test`');
  try {
    return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
  } catch (err) {
    if (!/did not start within/.test(String(err))) throw err;
  }
  const port = await freePort();
  const server = spawn(path, [String(port)], { stdio: 'ignore' });
  try {
    await listening(port, 120_000);
    // The SDK's own factory, with the server we started: only it can mark the connection as a
    // test-service one, which is what lets `env.sleep` skip time.
    const create = (TestWorkflowEnvironment as unknown as { create(o: unknown): Promise<TestWorkflowEnvironment> }).create.bind(TestWorkflowEnvironment);
    const env = await create({ server: { type: 'existing' }, address: `127.0.0.1:${port}`, namespace: 'default', supportsTimeSkipping: true, connectionOptions: {} });
    const teardown = env.teardown.bind(env);
    return Object.assign(env, { teardown: async () => { await teardown(); await stop(server); } });
  } catch (err) {
    await stop(server);
    throw err;
  }
}

async function listening(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => { socket.end(); resolve(true); });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the time-skipping test server did not listen on ${port} within ${timeoutMs} ms`);
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
