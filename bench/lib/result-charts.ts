/**
 * The charts beside the benchmarks' tables, drawn from their results JSON alone (no network, no stack):
 * bench/results/webhooks{,-cluster}.svg from webhooks{,-cluster}.json (throughput and p99 per phase, each shape,
 * against the run's engine ceiling) and bench/results/client-compare.svg from client-compare.json (what an
 * integrator sees, this tree beside the ref it was compared with and Svix, against each Tranche run's engine
 * ceiling). Each benchmark draws its own after writing its results; `npm run -s bench:chart` redraws every one
 * (docs/operators/performance.md shows them).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderChart, type Chart, type Series } from './svg-chart';

type Json = Record<string, unknown>;
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const obj = (v: unknown): Json => (v && typeof v === 'object' ? (v as Json) : {});
const day = (when: unknown) => (typeof when === 'string' ? when.slice(0, 10) : 'an unknown day');

/** A ceiling line's label: the engine's trivial workflows a second, over the runs drawn (one line at the first). */
const ceilingLabel = (values: number[]) => {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return `engine ceiling ${lo === hi ? lo : `${lo}–${hi}`} workflows/s`;
};

const COLOURS = ['#2b6cb0', '#9c4221', '#2f855a', '#6b46c1'];

/**
 * The delivery engine's benchmark: the engine shape, and the workflow shape where the run measured it.
 * @internal exported for its tests
 */
export function webhooksChart(results: Json, title: string): Chart {
  const workflow = obj(results.shape_workflow);
  const shapes = [results, ...(num(workflow.engine_ceiling_workflows_per_s) !== null ? [workflow] : [])];
  const series: Series[] = shapes.map((s, i) => ({
    name: `${i === 0 ? 'engine' : 'workflow'} shape (${day(s.when)})`,
    colour: COLOURS[i]!,
  }));
  const each = (pick: (s: Json) => unknown) => shapes.map((s) => num(pick(s)));
  const sustained = (n: string) => each((s) => obj(s.sustained_deliveries_per_s)[n]);
  const ceilings = shapes
    .map((s) => ({ v: num(s.engine_ceiling_workflows_per_s) }))
    .filter((c): c is { v: number } => c.v !== null);
  return {
    title,
    subtitle: `${String(results.server ?? '')}`.slice(0, 150),
    series,
    panels: [
      {
        title: 'Throughput per phase, per second',
        scale: 'linear',
        rows: [
          { label: 'deliveries, 1 endpoint', values: sustained('1') },
          { label: 'deliveries, 10 endpoints', values: sustained('10') },
          { label: 'deliveries, 100 endpoints', values: sustained('100') },
          { label: 'API messages, 1 endpoint', values: each((s) => s.api_messages_per_s_1_endpoint) },
          { label: 'subscription lifecycles', values: each((s) => s.lifecycles_per_s) },
        ],
        lines: ceilings.slice(0, 1).map((c) => ({ label: ceilingLabel(ceilings.map((one) => one.v)), value: c.v })),
      },
      {
        title: 'p99 publish → receipt per phase, ms',
        scale: 'log',
        rows: [
          { label: '50/s, 1 endpoint', values: each((s) => s.p99_first_attempt_ms_at_50_events_per_s_1_endpoint) },
          { label: '200/s, 1 endpoint', values: each((s) => s.p99_ms_at_200_events_per_s_1_endpoint) },
          {
            label: '100/s, 10 endpoints',
            values: each((s) => s.p99_first_attempt_ms_at_100_events_per_s_10_endpoints),
          },
          { label: 'burst, 1 endpoint', values: each((s) => s.burst_p99_ms_1_endpoint) },
          { label: 'beside a parked endpoint', values: each((s) => s.parked_neighbour_p99_ms) },
          { label: 'beside a noisy tenant', values: each((s) => s.noisy_neighbour_p99_ms) },
          { label: 'first 30 s after /ready', values: each((s) => s.startup_p99_ms) },
        ],
      },
    ],
  };
}

/**
 * The client comparison: each system's runs, their median per figure; Svix where it ran.
 * @internal exported for its tests
 */
export function compareChart(results: Json): Chart {
  const systems = (Array.isArray(results.systems) ? results.systems : []).map(obj);
  const runs = (Array.isArray(results.runs) ? results.runs : []).map(obj);
  const median = (values: number[]) => {
    if (values.length === 0) return null;
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  const ofSystem = (label: unknown, pick: (r: Json) => unknown) =>
    median(
      runs
        .filter((r) => r.system === label)
        .map(pick)
        .map(num)
        .filter((v): v is number => v !== null),
    );
  const figure = (key: string) => systems.map((s) => ofSystem(s.label, (r) => obj(r.figures)[key]));
  const name = (s: Json) => {
    const text = String(s.describe ?? s.label);
    if (/svix/i.test(text)) return 'Svix OSS';
    return text.replace(/, npm start.*$/, '').replace(/^(\S+) \(\1\)$/, '$1');
  };
  const ceilings = systems
    .map((s) => ({ s, v: ofSystem(s.label, (r) => r.engine_ceiling_workflows_per_s) }))
    .filter((c): c is { s: Json; v: number } => c.v !== null);
  return {
    title: 'What an integrator sees: test pings through the public API, side by side',
    subtitle: `${day(results.when)}, one sitting, ${String(obj(results.machine).cpus ?? '?')} cores; runs alternated (bench/compare.ts)`,
    series: systems.map((s, i) => ({ name: name(s), colour: COLOURS[i % COLOURS.length]! })),
    panels: [
      {
        title: 'Throughput in a burst, per second',
        scale: 'linear',
        rows: [
          { label: 'accepted', values: figure('burst_accepted_per_s') },
          { label: 'delivered', values: figure('burst_delivered_per_s') },
        ],
        lines: ceilings.slice(0, 1).map((c) => ({ label: ceilingLabel(ceilings.map((one) => one.v)), value: c.v })),
      },
      {
        title: 'p99 send → receipt per phase, ms',
        scale: 'log',
        rows: [
          { label: 'paced 50/s', values: figure('paced50_p99_ms') },
          { label: 'paced 200/s', values: figure('paced200_p99_ms') },
          { label: 'burst', values: figure('burst_p99_ms') },
          { label: 'a tenant alone', values: figure('noisy_alone_p99_ms') },
          { label: 'beside a hanging endpoint', values: figure('noisy_beside_p99_ms') },
        ],
      },
    ],
  };
}

const CHARTS: { json: string; svg: string; chart: (r: Json) => Chart }[] = [
  { json: 'webhooks.json', svg: 'webhooks.svg', chart: (r) => webhooksChart(r, 'Delivery engine, dev server') },
  {
    json: 'webhooks-cluster.json',
    svg: 'webhooks-cluster.svg',
    chart: (r) => webhooksChart(r, 'Delivery engine, full Temporal server'),
  },
  { json: 'client-compare.json', svg: 'client-compare.svg', chart: compareChart },
];

/** Draws the chart of each results file present in `dir`; returns the files written. */
export function writeCharts(dir: string): string[] {
  const written: string[] = [];
  for (const { json, svg, chart } of CHARTS) {
    const file = join(dir, json);
    if (!existsSync(file)) continue;
    writeFileSync(join(dir, svg), renderChart(chart(JSON.parse(readFileSync(file, 'utf8')) as Json)));
    written.push(svg);
  }
  return written;
}
