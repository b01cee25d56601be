/**
 * The docs say what is true (`npm run -s lint:docs`, part of `npm test`). Fails, naming what to do, when
 *   - docs/operators/configuration.md is not what `npm run -s docs:config` writes from the settings schema
 *     (scripts/lib/config-page.ts), or a setting of the schema has no row in it;
 *   - a shell block of README.md sits under a heading no .ci/ script reads it by
 *     (scripts/lib/command-blocks.ts): every command the README shows is one CI runs as written.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { commandBlocks, headingsReadByCi } from './lib/command-blocks';
import { CONFIG_PAGE, missingSettings, renderConfigPage } from './lib/config-page';

const root = join(__dirname, '..');
const problems: string[] = [];

const page = readFileSync(join(root, CONFIG_PAGE), 'utf8');
for (const name of missingSettings(page)) problems.push(`${CONFIG_PAGE}: no row for the setting ${name}`);
if (page !== renderConfigPage()) problems.push(`${CONFIG_PAGE} is stale: run npm run -s docs:config and commit it`);

const ci = readdirSync(join(root, '.ci')).map((f) => readFileSync(join(root, '.ci', f), 'utf8'));
const read = headingsReadByCi(ci);
for (const block of commandBlocks(readFileSync(join(root, 'README.md'), 'utf8'))) {
  if (!read.has(block.heading)) {
    problems.push(
      `README.md:${block.line}: the shell block under "${block.heading}" is run by no .ci/ script ` +
        `(read it there with npx tsx scripts/command-block.ts README.md "${block.heading}", and run it)`,
    );
  }
}

for (const p of problems) process.stderr.write(`${p}\n`);
if (problems.length > 0) {
  process.stderr.write(`[docs] ${problems.length} problem(s)\n`);
  process.exit(1);
}
