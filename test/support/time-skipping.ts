import { TestWorkflowEnvironment } from '@temporalio/testing';

/** A cold JVM on a loaded machine can miss the SDK's fixed 5 s start window; a second try finds it warm. */
const START_TRIES = 4;

/**
 * Temporal's Java time-skipping test server (scripts/tools.sh test-server), started through its
 * `exec java` wrapper so the SDK's kill reaches the JVM.
 */
export async function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const path = process.env.TEMPORAL_TEST_SERVER;
  if (!path) throw new Error('TEMPORAL_TEST_SERVER is not set: run the tests with `npm test`');
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
    } catch (err) {
      if (attempt >= START_TRIES || !/did not start/.test(String(err))) throw err;
    }
  }
}
