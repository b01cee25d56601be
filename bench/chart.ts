/**
 * `npm run -s bench:chart`: redraws the SVG charts beside the benchmarks' tables from the results JSON in
 * bench/results/ (bench/lib/result-charts.ts), with no stack and no network.
 */
import { join } from 'node:path';
import { writeCharts } from './lib/result-charts';

const written = writeCharts(join(__dirname, 'results'));
process.stderr.write(
  `[bench] charts: ${written.map((f) => `bench/results/${f}`).join(', ') || 'no results to draw'}\n`,
);
