/**
 * `npm run build`, after `tsc -p tsconfig.build.json`: bundles the workflow code once into
 * dist/workflow-bundle.js, so a compiled worker starts without webpack (worker/bundle-workflows.ts).
 */
import { bundleWorkflowCode } from '@temporalio/worker';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

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
  const { code } = await bundleWorkflowCode({ workflowsPath: join(dist, 'workflows'), logger: quiet });
  writeFileSync(join(dist, 'workflow-bundle.js'), code);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
