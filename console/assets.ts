import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The console's static files: the UI libraries straight from their npm packages (no build step),
 * and the console's own stylesheet and chart script. A fixed list, so no path from a request ever
 * reaches the file system.
 */
const FILES: Record<string, { path: string; type: string }> = {
  'pico.min.css': { path: require.resolve('@picocss/pico'), type: 'text/css' },
  'htmx.min.js': { path: join(dirname(require.resolve('htmx.org')), 'htmx.min.js'), type: 'text/javascript' },
  'chart.umd.min.js': { path: join(dirname(require.resolve('chart.js')), 'chart.umd.min.js'), type: 'text/javascript' },
  'console.css': { path: join(__dirname, 'assets', 'console.css'), type: 'text/css' },
  'health-chart.js': { path: join(__dirname, 'assets', 'health-chart.js'), type: 'text/javascript' },
  'copy-secret.js': { path: join(__dirname, 'assets', 'copy-secret.js'), type: 'text/javascript' },
};

const cache = new Map<string, Buffer>();

export function asset(name: string): { body: Buffer; type: string } | null {
  const file = Object.hasOwn(FILES, name) ? FILES[name] : undefined;
  if (!file) return null;
  let body = cache.get(name);
  if (!body) {
    body = readFileSync(file.path);
    cache.set(name, body);
  }
  return { body, type: file.type };
}
