import type { Knex } from '@mikro-orm/postgresql';

/** The operational tables retention prunes, as the soak samples them. */
const RETAINED_TABLES = [
  'events',
  'webhook_deliveries',
  'webhook_attempts',
  'payment_notifications',
  'idempotency_keys',
] as const;
type Table = (typeof RETAINED_TABLES)[number];

/** One sample: seconds since the soak started, and each table's rows and bytes (with indexes and TOAST). */
export interface TableSample {
  t: number;
  rows: Record<Table, number>;
  bytes: Record<Table, number>;
}

export async function sampleTables(knex: Knex, t: number): Promise<TableSample> {
  const parts = RETAINED_TABLES.map(
    (table) =>
      `select '${table}' as name, count(*)::bigint as n, pg_total_relation_size('${table}') as b from ${table}`,
  );
  const { rows } = (await knex.raw(parts.join(' union all '))) as { rows: { name: Table; n: string; b: string }[] };
  const sample: TableSample = { t, rows: {} as TableSample['rows'], bytes: {} as TableSample['bytes'] };
  for (const r of rows) {
    sample.rows[r.name] = Number(r.n);
    sample.bytes[r.name] = Number(r.b);
  }
  return sample;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * Whether each table stayed flat once the first retention window (and a prune after it) had
 * passed: the mean of the last third of those samples against the first third. Rows must hold
 * within `tolerance`; bytes are reported beside them (PostgreSQL reuses freed space after
 * autovacuum, it does not give it back).
 */
export function flatness(samples: readonly TableSample[], steadyFrom: number, tolerance = 0.15) {
  const steady = samples.filter((s) => s.t >= steadyFrom);
  const third = Math.max(1, Math.floor(steady.length / 3));
  const first = steady.slice(0, third);
  const last = steady.slice(-third);
  const rows = (ss: readonly TableSample[], table: Table) => mean(ss.map((s) => s.rows[table]));
  const bytes = (ss: readonly TableSample[], table: Table) => mean(ss.map((s) => s.bytes[table]));
  const verdict = (table: Table) => {
    const [before, after] = [rows(first, table), rows(last, table)];
    const rowGrowth = before > 0 ? after / before : after === 0 ? 1 : Infinity;
    const [bytesBefore, bytesAfter] = [bytes(first, table), bytes(last, table)];
    return {
      rows_first_third: Math.round(before),
      rows_last_third: Math.round(after),
      rows_max: Math.max(...steady.map((s) => s.rows[table])),
      row_growth: round(rowGrowth),
      bytes_first_third: Math.round(bytesBefore),
      bytes_last_third: Math.round(bytesAfter),
      byte_growth: round(bytesBefore > 0 ? bytesAfter / bytesBefore : 1),
      flat: steady.length >= 3 && rowGrowth <= 1 + tolerance,
    };
  };
  const tables = Object.fromEntries(RETAINED_TABLES.map((table) => [table, verdict(table)])) as Record<
    Table,
    ReturnType<typeof verdict>
  >;
  return { steady_from_s: steadyFrom, steady_samples: steady.length, tolerance, tables };
}
