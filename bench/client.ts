/**
 * The client benchmark: what an integrator sees through the public API
 * (docs/decisions/0393-client-benchmark-and-request-timing.md). Starts this tree exactly as `npm start` runs it
 * (its own ports and data folder), mints a real access token through the development identity provider and the
 * token exchange, registers endpoints at a verifying sink process, and runs the Svix harness's measurements
 * (bench/lib/client-phases.ts) with the engine's ceiling measured in the same run. The API runs with
 * API_REQUEST_TIMING, so each phase also says where the slowest 1 % of requests spent their time, layer by layer.
 * Writes bench/results/client.{json,md}; exits 1 when anything arrived other than what was owed.
 *   npm run bench -- client [--hog]    (BENCH_SCALE=0.05 for a smoke run, which writes no results)
 * `npm run bench -- compare <ref>` runs the same harness against an earlier commit and Svix (bench/compare.ts).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { clientRun, scaled, type RunResult } from './lib/client-run';
import { currentCommit } from './lib/ref-tree';
import { machine } from './lib/host';
import { runMarkdown } from './lib/client-report';
import { runBench } from './lib/run-bench';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const root = join(__dirname, '..');

/** Where the layers were not timed although the setting was on: the instrument itself failed. */
function untimed(run: RunResult): string[] {
  if (!('detail' in run)) return [];
  return Object.entries(run.detail as Record<string, { layers?: { untimed: number }; layers_beside?: unknown }>)
    .filter(([name, d]) => name !== 'noisy' && (!d.layers || d.layers.untimed > 0))
    .map(([name, d]) => `${name}: ${d.layers ? d.layers.untimed : 'every'} answer(s) without Server-Timing`);
}

async function main(): Promise<boolean> {
  const { values } = parseArgs({ options: { hog: { type: 'boolean', default: false } } });
  const logDir = mkdtempSync(join(tmpdir(), 'tranche-client-logs-'));
  const commit = currentCommit();
  console.log(`[bench] client: this tree (${commit}) as npm start runs it, outputs in ${logDir}`);
  const run = await clientRun(
    { label: 'B', kind: 'tranche', dir: root, commit, env: { API_REQUEST_TIMING: 'true' } },
    { round: 1, ...scaled(SCALE), hog: values.hog, logDir },
  );
  run.failures.push(...untimed(run));
  const results = {
    when: new Date().toISOString(),
    command: `npm run bench -- client${values.hog ? ' --hog' : ''}`,
    scale: SCALE,
    machine: machine(),
    harness:
      'through the public API: a real access token (dev IdP + exchange), a test ping per message (Set A), an Idempotency-Key on each, receipts at a verifying sink process; API_REQUEST_TIMING on',
    ...run,
  };
  console.log(JSON.stringify(results, null, 2));
  if (SCALE === 1 && !run.failures.length) {
    mkdirSync(join(root, 'bench/results'), { recursive: true });
    writeFileSync(join(root, 'bench/results/client.json'), `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(join(root, 'bench/results/client.md'), runMarkdown(results));
  }
  console.log(`[bench] client ${run.failures.length ? `FAILED: ${run.failures.join('; ')}` : 'passed'}`);
  return run.failures.length === 0;
}

runBench(main);
