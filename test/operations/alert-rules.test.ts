import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { embeddedDefaults } from '../../scripts/lib/embedded-defaults';
import { freePort } from '../../scripts/lib/free-port';
import { stopProcess } from '../../scripts/lib/temporal-dev-server';
import { freshDatabase } from '../support/service';
import { toolPath } from '../support/tools';
import { until } from '../support/wait';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const RULES = join(root, 'deploy', 'prometheus', 'alerts.yml');
const RULE_TESTS = join(root, 'deploy', 'prometheus', 'alerts.test.yml');
const DASHBOARD = join(root, 'deploy', 'grafana', 'tranche-dashboard.json');

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules = (): Rule[] =>
  (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

/** Every query of the dashboard's panels, rows and all. */
function dashboardQueries(): string[] {
  const panels = (JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] }).panels;
  interface Panel {
    panels?: Panel[];
    targets?: { expr: string }[];
  }
  const walk = (ps: Panel[]): string[] =>
    ps.flatMap((p) => [...(p.targets ?? []).map((t) => t.expr), ...walk(p.panels ?? [])]);
  return walk(panels);
}

/** The service's metric names a PromQL expression reads. */
const metricNames = (expr: string): string[] => [...new Set(expr.match(/\b(?:tranche|temporal)_[a-z0-9_]+\b/g) ?? [])];

/** The names a scrape answers for: each family's, and a histogram's _bucket, _count and _sum. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const typed = /^# TYPE (\S+) (\S+)/.exec(line);
    if (typed) {
      const [, name, type] = typed as unknown as [string, string, string];
      names.add(name);
      if (type === 'histogram') for (const suffix of ['_bucket', '_count', '_sum']) names.add(name + suffix);
    } else if (line && !line.startsWith('#')) names.add(line.split(/[{ ]/)[0]!);
  }
  return names;
}

/** A sample's value, the first series of `name` whose labels include `labels`. */
const sample = (text: string, name: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
};

describe('the alert rules (deploy/prometheus/alerts.yml)', () => {
  it('pass promtool check rules', async () => {
    const { stdout } = await run(toolPath('promtool'), ['check', 'rules', RULES], { timeout: 30_000 });
    expect(stdout).toContain(`SUCCESS: ${rules().length} rules found`);
  });

  it("pass promtool's unit tests, which make each alert fire and hold it back", async () => {
    const { stdout } = await run(toolPath('promtool'), ['test', 'rules', RULE_TESTS], { timeout: 60_000 });
    expect(stdout).toContain('SUCCESS');
    // Every alert has a case that expects it firing and one that expects it quiet.
    const tests = (
      parse(readFileSync(RULE_TESTS, 'utf8')) as {
        tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
      }
    ).tests.flatMap((t) => t.alert_rule_test);
    for (const { alert } of rules()) {
      const cases = tests.filter((t) => t.alertname === alert);
      expect([alert, cases.some((t) => t.exp_alerts.length > 0)]).toEqual([alert, true]);
      expect([alert, cases.some((t) => t.exp_alerts.length === 0)]).toEqual([alert, true]);
    }
  });

  it('each have a duration, a severity, a summary and a runbook section that exists', () => {
    const runbooks = readFileSync(join(root, 'docs', 'operators', 'runbooks.md'), 'utf8');
    // GitHub's anchors: lower case, punctuation dropped, spaces to hyphens.
    const anchors = new Set(
      [...runbooks.matchAll(/^#+ (.+)$/gm)].map((m) =>
        m[1]!
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    for (const rule of rules()) {
      expect([rule.alert, rule.for]).toEqual([rule.alert, expect.stringMatching(/^\d+[smh]$/)]);
      expect([rule.alert, rule.labels?.severity]).toEqual([
        rule.alert,
        expect.stringMatching(/^(critical|warning|info)$/),
      ]);
      expect([rule.alert, rule.annotations?.summary]).toEqual([rule.alert, expect.any(String)]);
      const [path, anchor] = (rule.annotations?.runbook_url ?? '').split('#');
      expect([rule.alert, path, anchors.has(anchor!)]).toEqual([rule.alert, 'docs/operators/runbooks.md', true]);
    }
  });
});

/**
 * The rules and the dashboard cannot drift from the code: an API and a worker started as deployed
 * (their metrics ports set) are scraped, and every metric a rule or a panel reads must be there.
 */
describe('every metric the alerts and the dashboard read is exported by a running API and worker', () => {
  const children: ChildProcess[] = [];
  const ports: Record<string, string> = {};
  const scrapes: Record<string, string> = {};
  const taskQueue = `alerts-${randomUUID()}`;
  const scrape = (variable: string) =>
    fetch(`http://127.0.0.1:${ports[variable]}/metrics`).then(
      (r) => (r.ok ? r.text() : ''),
      () => '',
    );

  beforeAll(async () => {
    for (const name of ['METRICS_PORT', 'WORKER_METRICS_PORT', 'TEMPORAL_METRICS_PORT'])
      ports[name] = String(await freePort());
    const env = {
      ...process.env,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      DATABASE_URL: await freshDatabase(),
      TEMPORAL_TASK_QUEUE: taskQueue,
      PORT: String(await freePort()),
      ...embeddedDefaults(ports),
    };
    for (const file of ['worker/main.ts', 'server/main.ts'])
      children.push(spawn(process.execPath, ['--import', 'tsx', join(root, file)], { env, stdio: 'ignore' }));
    // The worker's first audit checkpoint round, and its first workflow and activity tasks, have run.
    scrapes.worker = await until(
      'the worker to have taken an audit checkpoint',
      () => scrape('WORKER_METRICS_PORT'),
      (t) => (sample(t, 'tranche_audit_checkpoint_last_taken_timestamp_seconds') ?? 0) > 0,
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    scrapes.temporal = await until(
      "the SDK's schedule-to-start histograms",
      () => scrape('TEMPORAL_METRICS_PORT'),
      (t) =>
        t.includes('temporal_workflow_task_schedule_to_start_latency_bucket') &&
        t.includes('temporal_activity_schedule_to_start_latency_bucket'),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    scrapes.api = await until(
      'the API metrics',
      () => scrape('METRICS_PORT'),
      (t) => t.includes('tranche_'),
      {
        timeoutMs: 60_000,
        intervalMs: 500,
      },
    );
  }, 200_000);
  afterAll(async () => {
    await Promise.all(children.map((c) => stopProcess(c)));
  });

  it('exports every metric a rule reads', () => {
    const exported = exportedNames(Object.values(scrapes).join('\n'));
    const used = rules().flatMap((r) => metricNames(r.expr).map((name) => [r.alert, name]));
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter(([, name]) => !exported.has(name!))).toEqual([]);
  });

  it('exports every metric a dashboard panel reads', () => {
    const exported = exportedNames(Object.values(scrapes).join('\n'));
    const used = dashboardQueries().flatMap(metricNames);
    expect(used.length).toBeGreaterThan(10);
    expect(used.filter((name) => !exported.has(name))).toEqual([]);
  });

  it("reports the audit checkpoint's time and the backlog's age, as the rules read them", () => {
    const taken = sample(scrapes.worker!, 'tranche_audit_checkpoint_last_taken_timestamp_seconds')!;
    expect(Math.abs(Date.now() / 1000 - taken)).toBeLessThan(120);
    // The SDK's latencies are by task queue, the label the Temporal rules keep.
    const queued = scrapes.temporal!.split('\n').filter((l) => l.includes('schedule_to_start_latency_bucket{'));
    expect(queued.length).toBeGreaterThan(0);
    for (const line of queued) expect(line).toContain(`task_queue="${taskQueue}"`);
    // A fresh database: nothing waits.
    expect(sample(scrapes.api!, 'tranche_webhook_oldest_pending_delivery_age_seconds')).toBe(0);
  });
});
