/**
 * The client benchmark in one sitting against an earlier commit and the Svix peer
 * (docs/decisions/0394-client-compare-alternates-runs.md):
 *   npm run bench -- compare <ref> [--rounds N] [--hog]
 * builds <ref> in its own folder (bench/lib/ref-tree.ts), then alternates A (<ref>), B (this tree) and, when its
 * binary is there, S (Svix) run by run, A B S A B S …, each started fresh and warmed, all driven by this tree's
 * harness (bench/lib/client-phases.ts) through their own public APIs. Reports each figure's ratios B/A, B/S and
 * A/S round by round with their spread, and with --hog how each figure degrades beside a CPU hog. Records the
 * host's steal and load for each run. Writes bench/results/client-compare.{json,md} (BENCH_SCALE below 1: a
 * smoke run, which writes none); exits 1 when any run received other than it owed.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { clientRun, scaled, type RunResult, type SystemSpec } from './lib/client-run';
import { compareMarkdown, compareRatios } from './lib/client-report';
import { machine } from './lib/host';
import { currentCommit, refTree } from './lib/ref-tree';
import { runBench } from './lib/run-bench';
import { svixBinary, svixPresent } from './lib/svix-peer';
import { writeCharts } from './lib/result-charts';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const root = join(__dirname, '..');

async function main(): Promise<boolean> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { rounds: { type: 'string', default: '3' }, hog: { type: 'boolean', default: false } },
  });
  const ref = positionals[0];
  const rounds = Number(values.rounds);
  if (!ref || !Number.isInteger(rounds) || rounds < 1)
    throw new Error('usage: npm run bench -- compare <ref> [--rounds N] [--hog]');
  const a = refTree(ref);
  const b = currentCommit();
  const specs: (SystemSpec & { describe: string })[] = [
    {
      label: 'A',
      kind: 'tranche',
      dir: a.dir,
      commit: a.short,
      describe: `${ref} (${a.short}), npm start in ${a.dir}`,
    },
    { label: 'B', kind: 'tranche', dir: root, commit: b, describe: `this tree (${b}), npm start` },
  ];
  const svix = svixPresent();
  if (svix)
    specs.push({
      label: 'S',
      kind: 'svix',
      describe: `Svix OSS (${svixBinary()}), memory queue, its own PostgreSQL 18 (fsync and synchronous_commit off, as Tranche's)`,
    });
  const logDir = mkdtempSync(join(tmpdir(), 'tranche-compare-logs-'));
  console.log(
    `[bench] compare: ${specs.map((s) => s.label).join(' ')} × ${rounds} rounds${values.hog ? ', each with a hog phase' : ''}${svix ? '' : ` (no Svix: ${svixBinary()} is not there)`}; outputs in ${logDir}`,
  );
  const runs: RunResult[] = [];
  for (let round = 1; round <= rounds; round++)
    for (const spec of specs) {
      console.log(`[bench] round ${round}, ${spec.label} (${spec.describe})`);
      const run = await clientRun(spec, { round, ...scaled(SCALE), hog: values.hog, logDir });
      const figures = 'figures' in run ? run.figures : null;
      console.log(JSON.stringify({ system: run.system, round, minutes: run.minutes, figures, failures: run.failures }));
      runs.push(run);
    }
  const systems = specs.map((s) => s.label);
  const failures = runs.flatMap((r) => r.failures.map((f) => `${r.system} round ${r.round}: ${f}`));
  const results = {
    when: new Date().toISOString(),
    command: `npm run bench -- compare ${ref} --rounds ${rounds}${values.hog ? ' --hog' : ''}`,
    scale: SCALE,
    machine: machine(),
    rounds,
    hog: values.hog,
    order: `${systems.join(' ')} each round, each system started fresh and warmed ${scaled(SCALE).seconds(60)} s`,
    systems: specs.map(({ label, describe }) => ({ label, describe })),
    svix: svix ? 'in the rotation' : `not run: ${svixBinary()} is not there (../shared/peers/svix/build.sh makes it)`,
    harness:
      "this tree's, through each system's public API: a real access token (Tranche: dev IdP + exchange; Svix: its JWT), a test ping per message (Tranche Set A's POST …/test; Svix a message with the same body) with an Idempotency-Key, receipts at a verifying sink process; API_REQUEST_TIMING off",
    ...compareRatios(runs, systems),
    failures,
    runs,
  };
  console.log(JSON.stringify({ ratios: results.ratios, degradation: results.degradation, failures }, null, 2));
  if (SCALE === 1 && !failures.length) {
    mkdirSync(join(root, 'bench/results'), { recursive: true });
    writeFileSync(join(root, 'bench/results/client-compare.json'), `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(join(root, 'bench/results/client-compare.md'), compareMarkdown(results));
    writeCharts(join(root, 'bench/results'));
  }
  console.log(`[bench] compare ${failures.length ? `FAILED: ${failures.join('; ')}` : 'passed'}`);
  return failures.length === 0;
}

runBench(main);
