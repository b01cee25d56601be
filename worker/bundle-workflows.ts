import { Worker as Thread } from 'node:worker_threads';
import { FAILURE_CONVERTER_PATH } from '../lib/runtime/payload-codec';

// Runs in a thread of its own: webpack's memory goes away with the thread instead of staying in
// the worker's heap for its whole life (about 300 MiB of RSS on a 2-core machine).
const THREAD = `
  const { parentPort, workerData } = require('node:worker_threads');
  const { bundleWorkflowCode } = require(workerData.sdk);
  const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };
  bundleWorkflowCode({
    workflowsPath: workerData.workflows,
    workflowInterceptorModules: workerData.interceptors,
    failureConverterPath: workerData.failureConverter,
    logger: quiet,
  })
    .then((bundle) => parentPort.postMessage({ code: bundle.code }))
    .catch((err) => parentPort.postMessage({ error: String(err && err.stack || err) }));
`;

/**
 * Workflow interceptors every bundle carries: a signal whose payload arrived unsealed is dropped, a start
 * with unsealed input fails (workflows/unsealed-refused.ts, docs/decisions/0379-unsealed-payloads-refused.md).
 */
export const WORKFLOW_INTERCEPTOR_MODULES: readonly string[] = [require.resolve('../workflows/unsealed-refused')];

/** The service's workflow code, bundled for the Temporal worker (with these workflow interceptor modules too). */
export function bundleWorkflows(extraInterceptors: readonly string[] = []): Promise<string> {
  const interceptors = [...WORKFLOW_INTERCEPTOR_MODULES, ...extraInterceptors];
  return new Promise((resolve, reject) => {
    const thread = new Thread(THREAD, {
      eval: true,
      workerData: {
        sdk: require.resolve('@temporalio/worker'),
        workflows: require.resolve('../workflows'),
        interceptors,
        failureConverter: FAILURE_CONVERTER_PATH,
      },
    });
    thread.once('message', (m: { code?: string; error?: string }) =>
      m.code ? resolve(m.code) : reject(new Error(m.error)),
    );
    thread.once('error', reject);
  });
}
