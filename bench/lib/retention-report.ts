/** bench/results/retention.md from the soak's results: the table sizes after the first window, p99 around prunes. */
export function retentionMarkdown(r: Record<string, any>): string {
  const tables = r.detail.flatness.tables as Record<string, Record<string, number | boolean>>;
  const mib = (b: unknown) => (Number(b) / 1048576).toFixed(1);
  const l = r.detail.latency;
  return [
    '# Retention soak',
    '',
    `Run ${r.when} (\`npm run bench -- retention\`${r.scale === 1 ? '' : `, BENCH_SCALE=${r.scale}`}). Load average at start ${r.load_average_at_start.join(', ')}, at end ${r.load_average_at_end.join(', ')}. ${r.machine.cpus} × ${r.machine.model}, Node ${r.machine.node}.`,
    `Server: ${r.server}.`,
    `Soak: ${r.soak_s} s publishing ${r.offered.events_per_s} events/s in-process to ${r.offered.endpoints_per_event} endpoints, ${r.offered.api_pings_per_s_with_idempotency_key} API pings/s with an Idempotency-Key and ${r.offered.payment_notifications_per_s} sandbox payment notifications/s (${r.offered.deliveries_per_s} deliveries/s, ${r.ratios.deliveries_per_s_to_engine_ceiling}× the engine ceiling of ${r.engine_ceiling_workflows_per_s} workflows/s).`,
    `Retention: ${Object.entries(r.configuration)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}; ${r.prune_runs} prune runs, ${r.prune_run_s.p50} s median, ${r.prune_run_s.max} s longest.`,
    '',
    `## Table sizes after the first window (from ${r.detail.flatness.steady_from_s} s, ${r.detail.flatness.steady_samples} samples)`,
    '',
    '| table | rows, first third | rows, last third | growth | MiB, first third | MiB, last third | flat |',
    '|---|---|---|---|---|---|---|',
    ...Object.entries(tables).map(
      ([name, t]) =>
        `| ${name} | ${t.rows_first_third} | ${t.rows_last_third} | ${t.row_growth}× | ${mib(t.bytes_first_third)} | ${mib(t.bytes_last_third)} | ${t.flat ? 'yes' : '**no**'} |`,
    ),
    '',
    '## First-attempt latency (publish → arrival at the local receiver)',
    '',
    '| | deliveries | p50 ms | p99 ms | max ms |',
    '|---|---|---|---|---|',
    `| a prune ran during the flight | ${l.during_prune.n} | ${l.during_prune.p50} | ${l.during_prune.p99} | ${l.during_prune.max} |`,
    `| no prune ran | ${l.outside_prune.n} | ${l.outside_prune.p50} | ${l.outside_prune.p99} | ${l.outside_prune.max} |`,
    '',
    `p99 during a prune / outside: ${r.ratios.p99_during_to_outside_prune}. In ${l.window_ms / 1000} s windows: ${l.windows_with_prune.count} with a prune (median window p99 ${l.windows_with_prune.median_window_p99} ms), ${l.windows_without_prune.count} without (median window p99 ${l.windows_without_prune.median_window_p99} ms).`,
    `Rows pruned: ${Object.entries(r.rows_pruned)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}. Deliveries received ${r.received} of ${r.owed}, duplicates ${r.duplicates}.`,
    '',
    r.failures.length
      ? `**Failed:** ${r.failures.join('; ')}`
      : 'Every table stayed flat after the first window; every delivery arrived once.',
    '',
  ].join('\n');
}
