import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compareChart, webhooksChart } from '../../bench/lib/result-charts';
import { renderChart } from '../../bench/lib/svg-chart';
import { ConfigSchema } from '../../lib/runtime/config-schema';
import { commandBlocks, headingsReadByCi } from '../../scripts/lib/command-blocks';
import { CONFIG_PAGE, missingSettings, renderConfigPage } from '../../scripts/lib/config-page';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const ciScripts = () => readdirSync(join(root, '.ci')).map((f) => read(join('.ci', f)));

/** The docs the README and docs/ promise (docs/contributors/testing.md, Documentation checks). */
describe('the docs say what is true', () => {
  it('the configuration page is what the settings schema writes, with a row for every setting', () => {
    const page = read(CONFIG_PAGE);
    expect(missingSettings(page)).toEqual([]);
    expect(page).toBe(renderConfigPage());
    expect(Object.keys(ConfigSchema.shape).length).toBeGreaterThan(50);
  });

  it('names a setting the page lost, and the page with it is stale', () => {
    const page = read(CONFIG_PAGE);
    const lost = page
      .split('\n')
      .filter((l) => !l.startsWith('| `WEBHOOK_DELIVERY_SHAPE` |'))
      .join('\n');
    expect(missingSettings(lost)).toEqual(['WEBHOOK_DELIVERY_SHAPE']);
    expect(lost).not.toBe(renderConfigPage());
  });

  it('every shell block of the README is one a .ci/ script reads by its heading, and the tour is one', () => {
    const blocks = commandBlocks(read('README.md'));
    const runByCi = headingsReadByCi(ciScripts());
    expect(blocks.map((b) => b.heading)).toEqual(['Quick start', 'A five-minute tour']);
    expect(blocks.filter((b) => !runByCi.has(b.heading))).toEqual([]);
  });

  it('reports a README block no CI script reads', () => {
    const blocks = commandBlocks('# T\n\n## Read\n\n```sh\nnpm start\n```\n\n## Unread\n\n```bash\nnpm run x\n```\n');
    const runByCi = headingsReadByCi(['npx tsx scripts/command-block.ts README.md "Read" | bash']);
    expect(blocks.filter((b) => !runByCi.has(b.heading)).map((b) => [b.heading, b.line, b.code])).toEqual([
      ['Unread', 11, 'npm run x\n'],
    ]);
  });

  it("keeps the README's first screen, up to the end of the tour, under 400 words", () => {
    const readme = read('README.md');
    const firstScreen = readme.slice(0, readme.indexOf('\n## Where to go next'));
    expect(readme).toContain('\n## Where to go next');
    expect(firstScreen.split(/\s+/).filter(Boolean).length).toBeLessThan(400);
  });

  it('prints the block CI runs, and refuses a heading with none', async () => {
    const { stdout } = await run('npx', ['tsx', 'scripts/command-block.ts', 'README.md', 'Quick start'], {
      cwd: root,
    });
    expect(stdout.replace(/ *#.*$/gm, '')).toBe('npm start\nnpm test\n');
    await expect(
      run('npx', ['tsx', 'scripts/command-block.ts', 'README.md', 'Where to go next'], { cwd: root }),
    ).rejects.toMatchObject({ stderr: expect.stringContaining('has 0 shell blocks under "Where to go next"') });
  });

  it('the performance page shows each chart, and each chart is what its results JSON draws, Svix beside this tree', () => {
    const page = read('docs/operators/performance.md');
    const json = (name: string) => JSON.parse(read(`bench/results/${name}.json`)) as Record<string, unknown>;
    const compare = renderChart(compareChart(json('client-compare')));
    expect(read('bench/results/client-compare.svg')).toBe(compare);
    expect(read('bench/results/webhooks.svg')).toBe(
      renderChart(webhooksChart(json('webhooks'), 'Delivery engine, dev server')),
    );
    for (const svg of ['client-compare.svg', 'webhooks.svg', 'webhooks-cluster.svg']) {
      expect(page).toContain(`](../../bench/results/${svg})`);
    }
    // The chart draws each system's median over its runs (one run per round).
    const svix = (json('client-compare').runs as { system: string; figures: { burst_accepted_per_s: number } }[])
      .filter((r) => r.system === 'S')
      .map((r) => r.figures.burst_accepted_per_s)
      .sort((a, b) => a - b);
    const mid = Math.floor(svix.length / 2);
    const svixMedian = svix.length % 2 ? svix[mid]! : (svix[mid - 1]! + svix[mid]!) / 2;
    expect(compare).toContain('Svix OSS');
    expect(compare).toContain(`>${Math.round(svixMedian)}</text>`);
    expect(compare).toMatch(/engine ceiling [\d.–]+ workflows\/s/);
  });
});
