import type { LayerShares } from './layer-shares';

/** The client benchmark's figures, in the order the reports give them; `more` is better for rates only. */
const FIGURES: readonly (readonly [key: string, label: string, more: boolean])[] = [
  ['burst_accepted_per_s', 'burst, 5,000 at 32 in flight: messages accepted/s', true],
  ['burst_delivered_per_s', 'burst: delivered/s', true],
  ['burst_accepted_to_engine_ceiling', "burst: accepted/s over the run's engine ceiling (Tranche)", true],
  ['burst_p50_ms', 'burst: p50 publish → receipt, ms', false],
  ['burst_p99_ms', 'burst: p99 publish → receipt, ms', false],
  ['burst_answer_p99_ms', "burst: p99 of the API's answer, ms", false],
  ['burst_cpu_ms_per_message', "burst: the system's CPU-ms per message", false],
  ['paced50_p50_ms', '50/s: p50 publish → receipt, ms', false],
  ['paced50_p99_ms', '50/s: p99 publish → receipt, ms', false],
  ['paced200_p50_ms', '200/s: p50 publish → receipt, ms', false],
  ['paced200_p99_ms', '200/s: p99 publish → receipt, ms', false],
  ['noisy_alone_p99_ms', 'healthy tenant at 5/s alone: p99, ms', false],
  ['noisy_beside_p99_ms', 'the same beside a hanging endpoint: p99, ms', false],
  ['noisy_beside_to_alone', 'beside / alone', false],
];

type Run = Record<string, any>;

const hostLine = (r: Run) => {
  const h = r.host;
  if (!h) return 'not started';
  return `steal ${h.whole_run.steal_pct} % over the run (vmstat st ${h.at_start.st} → ${h.at_end.st}), load ${h.at_start.load.join(' ')} → ${h.at_end.load.join(' ')}`;
};

function layerTable(title: string, l: LayerShares | undefined): string[] {
  if (!l) return [];
  return [
    '',
    `${title}: the slowest ${l.slowest} of ${l.requests_timed} requests, ${l.slowest_client_mean_ms} ms on average at the client, ${l.slowest_server_total_mean_ms} ms of it in the API:`,
    '',
    '| layer | mean ms, slowest 1 % | share of their time | mean ms, every request |',
    '|---|---|---|---|',
    ...Object.entries(l.layers).map(
      ([k, v]) => `| ${k} | ${v.mean_ms} | ${v.share_pct} % | ${v.every_request_mean_ms} |`,
    ),
  ];
}

/** `client.md` under bench/results/: one run's figures, the host, and where the slowest 1 % of each phase's requests went. */
export function runMarkdown(r: Run): string {
  const d = r.detail ?? {};
  return [
    '# Client benchmark: the public API as an integrator sees it',
    '',
    `Run ${r.when} (\`${r.command}\`), commit ${r.commit}. ${r.machine.cpus} × ${r.machine.model}, Node ${r.machine.node}. Host: ${hostLine(r)}.`,
    `Harness: ${r.harness}. Ready ${r.ready_after_ms} ms after npm start; engine ceiling ${r.engine_ceiling_workflows_per_s} workflows/s.`,
    '',
    '| figure | value | beside a CPU hog |',
    '|---|---|---|',
    ...FIGURES.map(([k, label]) => `| ${label} | ${r.figures?.[k] ?? '—'} | ${r.hog?.figures?.[k] ?? '—'} |`),
    `| burst delivered / engine ceiling | ${r.to_engine_ceiling?.burst_delivered ?? '—'} | |`,
    ...layerTable('Burst', d.burst?.layers),
    ...layerTable('50/s', d.paced50?.layers),
    ...layerTable('200/s', d.paced200?.layers),
    ...layerTable('Healthy tenant beside the hanging endpoint', d.noisy?.layers_beside),
    '',
    r.failures.length ? `**Failed:** ${r.failures.join('; ')}` : 'Every message owed arrived exactly once.',
    '',
  ].join('\n');
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const r2 = (n: number) => Math.round(n * 100) / 100;

/** Per-round ratios of one system's figure to another's (runs of the same round), with their median and spread. */
function ratiosOf(runs: Run[], top: string, bottom: string, key: (r: Run) => number | undefined) {
  const rounds = [...new Set(runs.map((r) => r.round as number))];
  const perRound = rounds
    .map((n) => {
      const [a, b] = [top, bottom].map((s) => runs.find((r) => r.round === n && r.system === s));
      const [x, y] = [a && key(a), b && key(b)];
      return x !== undefined && y !== undefined && y !== 0 ? r2(x / y) : undefined;
    })
    .filter((v): v is number => v !== undefined && Number.isFinite(v));
  return perRound.length
    ? { per_round: perRound, median: r2(median(perRound)), min: Math.min(...perRound), max: Math.max(...perRound) }
    : null;
}

/**
 * The comparison's ratios: B (this tree) over A (the ref) and over S (Svix) for each figure, round by round;
 * with the hog, each system's degradation (the figure beside the hog over the figure without it) and B's
 * degradation over Svix's.
 */
export function compareRatios(runs: Run[], systems: string[]) {
  const pairs = [
    ['B', 'A'],
    ['B', 'S'],
    ['A', 'S'],
  ].filter(([x, y]) => systems.includes(x!) && systems.includes(y!));
  const ratios: Record<string, Record<string, ReturnType<typeof ratiosOf>>> = {};
  for (const [x, y] of pairs)
    ratios[`${x}/${y}`] = Object.fromEntries(FIGURES.map(([k]) => [k, ratiosOf(runs, x!, y!, (r) => r.figures?.[k])]));
  const degradation: Record<string, Record<string, unknown>> = {};
  for (const s of systems) {
    degradation[s] = Object.fromEntries(
      FIGURES.map(([k]) => {
        const values = runs.filter((r) => r.system === s && r.hog).map((r) => r.hog.degradation[k] as number);
        return [k, values.length ? { per_round: values, min: Math.min(...values), max: Math.max(...values) } : null];
      }),
    );
  }
  for (const [x, y] of pairs)
    degradation[`${x}/${y}`] = Object.fromEntries(
      FIGURES.map(([k]) => [k, ratiosOf(runs, x!, y!, (r) => r.hog?.degradation?.[k])]),
    );
  return { ratios, degradation };
}

const spread = (v: { median: number; min: number; max: number } | null | undefined) =>
  v ? `${v.median} (${v.min}–${v.max})` : '—';

/** `client-compare.md` under bench/results/. */
export function compareMarkdown(c: Run): string {
  const systems: string[] = c.systems.map((s: Run) => s.label);
  const valuesOf = (s: string, k: string, hog = false) =>
    c.runs
      .filter((r: Run) => r.system === s)
      .map((r: Run) =>
        hog ? (r.hog ? `${r.hog.figures[k]} (×${r.hog.degradation[k]})` : '—') : (r.figures?.[k] ?? '—'),
      )
      .join(' / ');
  const pairs = Object.keys(c.ratios);
  const table = (hog: boolean) => [
    `| figure | ${systems.map((s) => `${s}, each run`).join(' | ')} | ${pairs.map((p) => `${p} median (min–max)`).join(' | ')} |`,
    `|---|${systems.map(() => '---|').join('')}${pairs.map(() => '---|').join('')}`,
    // A figure no run measured beside the hog (the engine ceiling is taken once, without it) has no row there.
    ...FIGURES.filter(([k]) => !hog || c.runs.some((r: Run) => r.hog?.figures?.[k] !== undefined)).map(
      ([k, label, more]) =>
        `| ${label}${more ? ' ↑' : ''} | ${systems.map((s) => valuesOf(s, k, hog)).join(' | ')} | ${pairs.map((p) => spread((hog ? c.degradation : c.ratios)[p]?.[k])).join(' | ')} |`,
    ),
  ];
  return [
    '# Client benchmark, compared in one sitting',
    '',
    `Run ${c.when} (\`${c.command}\`). ${c.machine.cpus} × ${c.machine.model}, Node ${c.machine.node}. ${c.rounds} rounds, ${c.order}.`,
    ...c.systems.map((s: Run) => `- **${s.label}**: ${s.describe}`),
    `- Harness: ${c.harness}.`,
    '',
    'Figures of each run, then the ratio of one system to another round by round (↑: more is better; else less is).',
    '',
    ...table(false),
    ...(c.hog
      ? [
          '',
          'Beside a CPU hog (one busy process at nice 0): each figure, with its degradation (the figure beside the hog over the same run’s figure without it), then one system’s degradation over another’s:',
          '',
          ...table(true),
        ]
      : []),
    '',
    'The host, run by run:',
    '',
    '| run | system | started | minutes | host | engine ceiling |',
    '|---|---|---|---|---|---|',
    ...c.runs.map(
      (r: Run, i: number) =>
        `| ${i + 1} | ${r.system} | ${r.started_at} | ${r.minutes ?? '—'} | ${hostLine(r)} | ${r.engine_ceiling_workflows_per_s ?? '—'} |`,
    ),
    '',
    c.failures.length
      ? `**Failed:** ${c.failures.join('; ')}`
      : 'Every message owed arrived exactly once, in every run.',
    '',
  ].join('\n');
}
