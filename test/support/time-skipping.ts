import { TestWorkflowEnvironment } from '@temporalio/testing';

/**
 * Temporal's Java time-skipping test server (scripts/tools.sh test-server), started through its
 * `exec java` wrapper so the SDK's kill reaches the JVM.
 */
export function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const path = process.env.TEMPORAL_TEST_SERVER;
  if (!path) throw new Error('TEMPORAL_TEST_SERVER is not set: run the tests with `npm test`');
  return TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
}
