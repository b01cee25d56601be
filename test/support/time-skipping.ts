import { TestWorkflowEnvironment } from '@temporalio/testing';

/**
 * Temporal's Java time-skipping test server (scripts/tools.sh test-server), started through its
 * `exec java` wrapper so the SDK's kill reaches the JVM. The SDK waits only about 5 s for it to
 * listen; on a loaded machine a cold JVM can miss that, so a start is tried up to three times
 * (the class files are warm in the page cache by the second).
 */
export async function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const path = process.env.TEMPORAL_TEST_SERVER;
  if (!path) throw new Error('TEMPORAL_TEST_SERVER is not set: run the tests with `npm test`');
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
    } catch (err) {
      if (attempt >= 3 || !/did not start within/.test(String(err))) throw err;
    }
  }
}
