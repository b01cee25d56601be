import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAILURE_CONVERTER_PATH } from '../../lib/runtime/payload-codec';
import { WORKFLOW_INTERCEPTOR_MODULES } from '../../worker/bundle-workflows';

/** Bundles the workflow code once for every test worker in the run (about a second, not one per file). */
export default async function globalSetup(): Promise<void> {
  if (!process.env.DATABASE_URL || !process.env.TEMPORAL_ADDRESS) {
    throw new Error('Run the tests with `npm test` (scripts/test.sh), which brings up PostgreSQL and Temporal.');
  }
  const dir = process.env.TRANCHE_TEST_DATA_DIR ?? join(tmpdir(), 'tranche-test');
  mkdirSync(dir, { recursive: true });
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    failureConverterPath: FAILURE_CONVERTER_PATH,
    workflowInterceptorModules: [...WORKFLOW_INTERCEPTOR_MODULES],
    logger: quiet,
  });
  const path = join(dir, 'workflow-bundle.js');
  writeFileSync(path, code);
  process.env.WORKFLOW_BUNDLE_PATH = path;
}

const noop = () => undefined;
const quiet = { trace: noop, debug: noop, info: noop, warn: noop, error: console.error, log: noop };
