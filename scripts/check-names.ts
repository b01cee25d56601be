/**
 * `npm run lint:names` (part of `npm test`): a file's name says one thing across the tree
 * (docs/decisions/0330-rooms-and-walls.md). Two source files may share a name only when it is
 * - a role every folder of its kind has: `index.ts` (a room's public face), `router.ts` and
 *   `schema.ts` (an API feature's routes and request schemas);
 * - a role every process has: `main.ts`, `tracing-preload.ts`, `warm-up.ts`;
 * - one concern at each of its layers, directly in domain/, db/, activities/, workflows/ or bench/, or
 *   in one of webhooks/'s rooms (domain/audit-checkpoint.ts holds its types, workflows/audit-checkpoint.ts
 *   its workflow); the rooms of webhooks/ are one layer, so no two of them hold the same name.
 */
import { execFileSync } from 'node:child_process';
import { basename, dirname } from 'node:path';

const ROLES = new Set(['index.ts', 'router.ts', 'schema.ts', 'main.ts', 'tracing-preload.ts', 'warm-up.ts']);
const LAYERS = new Set(['domain', 'db', 'webhooks', 'activities', 'workflows', 'bench']);
/** A file's layer: its folder, or webhooks/ for a file in one of webhooks/'s rooms (docs/decisions/0425-webhooks-rooms.md). */
const layerOf = (dir: string) => (dir.startsWith('webhooks/') ? 'webhooks' : dir);
const OUTSIDE = /^(test|docs|types|deploy|\.ci)\/|\/generated\/|^db\/migrations\//;

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.js'], {
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => f && !OUTSIDE.test(f) && f.includes('/'));

const byName = new Map<string, string[]>();
for (const file of files) byName.set(basename(file), [...(byName.get(basename(file)) ?? []), file]);

const clashes = [...byName].filter(([name, paths]) => {
  if (paths.length < 2 || ROLES.has(name)) return false;
  const layers = paths.map((p) => layerOf(dirname(p)));
  return !layers.every((d) => LAYERS.has(d)) || new Set(layers).size !== layers.length;
});

for (const [name, paths] of clashes)
  console.error(`${name} names more than one thing: ${paths.join(', ')} (rename one so its name says what it holds)`);
if (clashes.length > 0) process.exit(1);
