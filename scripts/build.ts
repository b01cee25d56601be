/**
 * `npm run build`, after `tsc -p tsconfig.build.json`: bundles the workflow code once into
 * dist/workflow-bundle.js (and a traced one), so a compiled worker starts without webpack (worker/bundle-workflows.ts),
 * and writes the build's id into dist/build-info.json (lib/runtime/build-id.ts).
 */
import { bundleWorkflowCode } from '@temporalio/worker';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILD_INFO_FILE, buildIdOf } from '../lib/runtime/build-id';
import { FAILURE_CONVERTER_PATH } from '../lib/runtime/payload-codec';
import { WORKFLOW_TRACING_MODULE } from '../lib/runtime/tracing';
import { WORKFLOW_INTERCEPTOR_MODULES } from '../worker/bundle-workflows';

async function main(): Promise<void> {
  const dist = join(__dirname, '..'); // run compiled: dist/scripts/build.js
  const quiet = {
    trace: () => undefined,
    debug: () => undefined,
    info: () => undefined,
    warn: console.warn,
    error: console.error,
    log: () => undefined,
  };
  const workflowsPath = join(dist, 'workflows');
  const failureConverterPath = FAILURE_CONVERTER_PATH;
  const workflowInterceptorModules = [...WORKFLOW_INTERCEPTOR_MODULES];
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    failureConverterPath,
    workflowInterceptorModules,
    logger: quiet,
  });
  writeFileSync(join(dist, 'workflow-bundle.js'), code);
  // The same with the OpenTelemetry workflow interceptors, for a worker with tracing on.
  const traced = await bundleWorkflowCode({
    workflowsPath,
    failureConverterPath,
    workflowInterceptorModules: [...workflowInterceptorModules, WORKFLOW_TRACING_MODULE],
    logger: quiet,
  });
  writeFileSync(join(dist, 'workflow-bundle-traced.js'), traced.code);
  // From TRANCHE_BUILD_ID (the image's build argument) or the checkout's git; none, none is written, and a
  // versioned worker of this build asks for TRANCHE_BUILD_ID at start.
  const buildId = buildIdOf({ TRANCHE_BUILD_ID: process.env.TRANCHE_BUILD_ID }, join(dist, '..'));
  const info = join(dist, BUILD_INFO_FILE);
  if (buildId) writeFileSync(info, `${JSON.stringify({ buildId })}\n`);
  else rmSync(info, { force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
