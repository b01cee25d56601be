import { createHash } from 'node:crypto';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { Receiver } from '../webhooks/support/receiver';
import { builds, type Build } from '../upgrade/support/builds';
import { rollbackBarrier, stoppedAtBarrier } from '../upgrade/support/rollback-barrier';
import { RECORDED, recordRelease } from './support/release-recorder';

/** This checkout's migrations, as a digest of their names and text. */
function migrationsNow(): string {
  const dir = join(__dirname, '..', '..', 'db', 'migrations');
  const hash = createHash('sha256');
  for (const f of readdirSync(dir).sort()) hash.update(f).update(readFileSync(join(dir, f)));
  return hash.digest('hex').slice(0, 16);
}

/**
 * Histories recorded by each release (docs/decisions/0390-histories-recorded-by-each-release.md). The
 * previous release's own build (scripts/previous-release.sh) records a whole subscription in each set and
 * delivery shape once, kept beside its build outside the clone; this build records the same on every run.
 * The previous release records them on the schema this checkout's migrations leave, which is its smoke there.
 * The previous release's replay on this build (what an upgrade replays), and this build's on the previous
 * release (what a rollback replays): a change to what a workflow does that is not behind a patch fails here,
 * before it ships.
 */
describe('histories recorded by the previous release and by this build', () => {
  let previous: Build;
  let current: Build;
  let previousDir: string;
  let currentDir: string;
  const scratch = mkdtempSync(join(tmpdir(), 'histories-'));

  const replayAll = async (dir: string, codePath: string) => {
    const failures: string[] = [];
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    for (const file of files) {
      const history: unknown = JSON.parse(readFileSync(join(dir, file), 'utf8'));
      await Worker.runReplayHistory({ workflowBundle: { codePath } }, history, file).catch((err: Error) =>
        failures.push(`${file}: ${err.message.split('\n')[0]}`),
      );
    }
    return { files, failures };
  };

  beforeAll(async () => {
    ({ previous, current } = builds({ compiled: false }));
    const receiver = await Receiver.start();
    // The services' output, kept for a failure's reading.
    mkdirSync('test-output', { recursive: true });
    const output = createWriteStream(join('test-output', 'release-histories.log'));
    try {
      // Recorded once per set of migrations: the previous release runs on the schema this checkout's
      // migrations leave, its smoke on it (docs/decisions/0389-migrations-expand-then-contract.md).
      previousDir = join(previous.release!, 'histories');
      const recorded = `${previous.buildId} on ${migrationsNow()}\n`;
      const marker = join(previousDir, '.recorded');
      if (!existsSync(marker) || readFileSync(marker, 'utf8') !== recorded) {
        rmSync(previousDir, { recursive: true, force: true });
        await recordRelease({ build: previous, out: previousDir, receiver, output, onCurrentSchema: true });
        writeFileSync(marker, recorded);
      }
      currentDir = join(scratch, 'current');
      await recordRelease({ build: { ...current, release: undefined }, out: currentDir, receiver, output });
    } finally {
      await receiver.stop();
    }
  }, 900_000);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('records a whole subscription of each set and delivery shape, and its deliveries', () => {
    for (const dir of [previousDir, currentDir]) {
      const files = readdirSync(dir);
      for (const { set, shape } of RECORDED) {
        const tag = `${set.toLowerCase()}-${shape}`;
        expect(files).toContain(`${tag}-subscriptionWorkflow-1.json`);
        // engine shape: the refused first attempt's schedule; workflow shape: every delivery.
        expect(files).toContain(`${tag}-webhookDeliveryWorkflow-1.json`);
      }
    }
  });

  it("replays every history the previous release recorded on this build's workflow code", async () => {
    const { files, failures } = await replayAll(previousDir, process.env.WORKFLOW_BUNDLE_PATH!);
    expect(files.length).toBeGreaterThanOrEqual(8);
    expect(failures).toEqual([]);
  }, 300_000);

  it("replays every history this build recorded on the previous release's workflow code (a rollback)", async () => {
    const { files, failures } = await replayAll(currentDir, join(previous.release!, 'dist', 'workflow-bundle.js'));
    expect(files.length).toBeGreaterThanOrEqual(8);
    // Only the patches the release note names stop a rollback (deploy/rollback-barrier); any other difference fails.
    const barrier = rollbackBarrier();
    expect(failures.filter((f) => !stoppedAtBarrier(f, barrier))).toEqual([]);
  }, 300_000);
});
