/**
 * `npx tsx scripts/command-block.ts <page.md> "<heading>"`: prints the shell block under that heading, as
 * written, for CI to run (scripts/lib/command-blocks.ts). Fails when the heading has no shell block, or more than one.
 */
import { readFileSync } from 'node:fs';
import { commandBlocks } from './lib/command-blocks';

const [page, heading] = process.argv.slice(2);
if (!page || !heading) {
  process.stderr.write('usage: npx tsx scripts/command-block.ts <page.md> "<heading>"\n');
  process.exit(2);
}
const found = commandBlocks(readFileSync(page, 'utf8')).filter((b) => b.heading === heading);
if (found.length !== 1) {
  process.stderr.write(`${page} has ${found.length} shell blocks under "${heading}"; CI reads exactly one\n`);
  process.exit(1);
}
process.stdout.write(found[0]!.code);
