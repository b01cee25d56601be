/** bench/results/webhooks.md from the run's results: every key beside its ceilings, floor and verdict. */
export function markdown(r: Record<string, any>): string {
  const row = (key: string, value: unknown, floor: string, ratio = '') =>
    value === undefined
      ? `| ${key} | not run in this shape | | ${floor} |`
      : `| ${key} | ${value} | ${ratio} | ${floor} |`;
  const s = r.sustained_deliveries_per_s;
  const q = r.ratios;
  return [
    '# Delivery engine benchmark',
    '',
    `Run ${r.when} (\`${r.command ?? 'npm run bench -- webhooks'}\`). Load average at start ${r.load_average_at_start.join(', ')}, at end ${r.load_average_at_end.join(', ')}. ${r.machine.cpus} × ${r.machine.model}, Node ${r.machine.node}.`,
    `Server: ${r.server}.`,
    `Shape: ${r.shape}.`,
    ...(r.measured_apart ? [`Measured apart: ${r.measured_apart}.`] : []),
    '',
    '| key | value | ratio to the ceilings | floor |',
    '|---|---|---|---|',
    row('engine_ceiling_workflows_per_s', r.engine_ceiling_workflows_per_s, '—'),
    row('signed_posts_per_s', r.signed_posts_per_s, '—'),
    ...[1, 10, 100].map((n) =>
      row(
        `sustained_deliveries_per_s (${n})`,
        s[n],
        n === 1 ? '≥ 600' : n === 10 ? '≥ 1,500' : '—',
        `${q.sustained_to_signed_posts[n]} of signed POSTs, ${q.sustained_to_engine_ceiling[n]}× the engine`,
      ),
    ),
    row(
      'sustained_deliveries_per_s (100, each endpoint with a payload filter every event matches)',
      s['100_filtered'],
      '—',
      s['100_filtered'] === undefined
        ? ''
        : `${r.filtered_over_plain_100}× the plain 100, ${q.sustained_to_engine_ceiling['100_filtered']}× the engine`,
    ),
    row(
      'p99_first_attempt_ms_at_50_events_per_s_1_endpoint (API)',
      r.p99_first_attempt_ms_at_50_events_per_s_1_endpoint,
      `≤ ${r.floors.p99_first_attempt_ms_at_50_events_per_s_1_endpoint ?? 100}`,
    ),
    row(
      'p99_first_attempt_ms_at_100_events_per_s_10_endpoints',
      r.p99_first_attempt_ms_at_100_events_per_s_10_endpoints,
      '≤ 500',
    ),
    row(
      'noisy_neighbour_p99_ms',
      `${r.noisy_neighbour_p99_ms} (alone: ${r.noisy_neighbour_baseline_p99_ms})`,
      '≤ 100',
      `${q.noisy_to_baseline_p99}× the baseline`,
    ),
    row('burst_neighbour_p99_ms', r.burst_neighbour_p99_ms, '≤ 1,000'),
    row(
      'api_messages_per_s_1_endpoint',
      r.api_messages_per_s_1_endpoint,
      '≥ 1,000',
      `${q.api_messages_to_signed_posts} of signed POSTs`,
    ),
    row('duplicates', r.duplicates, '0'),
    row('worker_rss_mb_10k_pending_retries', r.worker_rss_mb_10k_pending_retries, '< 500'),
    row('lifecycles_per_s', r.lifecycles_per_s, '— (engine-bound)', `${q.lifecycles_to_engine_ceiling}× the engine`),
    row('startup_p99_ms (5/s, first 30 s after /ready)', r.startup_p99_ms, '—'),
    row(
      'p99_ms_at_200_events_per_s_1_endpoint (API)',
      r.p99_ms_at_200_events_per_s_1_endpoint,
      r.floors.p99_ms_at_200_events_per_s_1_endpoint ? `≤ ${r.floors.p99_ms_at_200_events_per_s_1_endpoint}` : '—',
    ),
    row(
      `burst_p99_ms_1_endpoint (${(r.detail?.apiBurst?.messages ?? 5000).toLocaleString('en')} pings, 32 in flight)`,
      r.burst_p99_ms_1_endpoint,
      '—',
      `delivered ${q.burst_delivered_to_engine_ceiling}× the engine`,
    ),
    row('parked_neighbour_p99_ms', r.parked_neighbour_p99_ms, '≤ 100'),
    '',
    ...hopRows(r.hops_ms_at_200_events_per_s_1_endpoint),
    '',
    // Each shape's verdict ends its own section.
    r.failures.length ? `**Failed:** ${r.failures.join('; ')}` : 'Every phase received exactly what it owed, once.',
    ...(r.shape_workflow?.not_run
      ? ['', `Shape workflow: not run (${r.shape_workflow.not_run}).`]
      : r.shape_workflow
        ? [
            '',
            '## Shape workflow (WEBHOOK_DELIVERY_SHAPE=workflow)',
            '',
            markdown(r.shape_workflow).split('\n').slice(2).join('\n'),
          ]
        : []),
    '',
  ].join('\n');
}

/**
 * The per-hop breakdown at 200/s (bench/lib/hops.ts): p50 and p99 of each hop, and each hop's mean over
 * the slowest 1 % by receipt (where the tail's time goes; absent in results written before it was timed).
 */
function hopRows(h: Record<string, any> | undefined): string[] {
  if (!h) return [];
  const tail: Record<string, number> | undefined = h.slowest_1_percent;
  const tailOf = (k: string) => (tail ? ` ${tail[`${k}_mean`] ?? ''} |` : '');
  return [
    `Per hop at 200 pings/s (${h.deliveries_timed} deliveries timed${tail ? `; the slowest 1 %: ${tail.deliveries}` : ''}), ms:`,
    '',
    `| hop | p50 | p99 |${tail ? ' slowest 1 %, mean |' : ''}`,
    `|---|---|---|${tail ? '---|' : ''}`,
    ...Object.entries(h)
      .filter(([k]) => k !== 'deliveries_timed' && k !== 'slowest_1_percent')
      .map(([k, v]) => `| ${k} | ${v.p50} | ${v.p99} |${tailOf(k)}`),
  ];
}
