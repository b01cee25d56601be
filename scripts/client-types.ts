/**
 * Regenerates test/contract/generated/set-{a,b}.ts from the document each set's API serves:
 * `npm run -s client-types` against a running API per set (CLIENT_TYPES_URL_A, CLIENT_TYPES_URL_B),
 * or against in-process apps built from the routers (the default; no database or Temporal needed).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clientTypes } from '../test/contract/client-types';
import { documentFor } from '../test/contract/served-document';

async function main() {
  for (const set of ['A', 'B'] as const) {
    const document = await documentFor(set, process.env[`CLIENT_TYPES_URL_${set}`]);
    const file = join(__dirname, '..', 'test', 'contract', 'generated', `set-${set.toLowerCase()}.ts`);
    writeFileSync(file, await clientTypes(document, set));
    process.stdout.write(`wrote ${file}\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
