/**
 * `npm run -s docs:config`: writes docs/operators/configuration.md from the settings schema
 * (scripts/lib/config-page.ts), so the page says what the service validates. `npm run -s lint:docs` fails
 * when the committed page is not what this writes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_PAGE, renderConfigPage } from './lib/config-page';

writeFileSync(join(__dirname, '..', CONFIG_PAGE), renderConfigPage());
process.stderr.write(`[docs] wrote ${CONFIG_PAGE}\n`);
