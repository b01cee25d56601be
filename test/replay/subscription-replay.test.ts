import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';

const dir = join(__dirname, 'histories');
const histories = readdirSync(dir).filter((f) => f.endsWith('.json'));

/**
 * Histories recorded from real runs must replay on today's workflow code, so a change that would
 * break running subscriptions fails CI. Record one with
 *   temporal workflow show -w <workflow-id> --address <host:port> -o json > test/replay/histories/<name>.json
 */
// Subscriptions, the delivery engine's retry scheduler and delivery workflows, recovery and ordered delivery.
describe('replaying recorded workflow histories', () => {
  it('has histories to replay', () => {
    expect(histories.length).toBeGreaterThan(0);
  });

  it.each(histories)('replays %s without a determinism error', async (file) => {
    // The SDK takes the CLI's JSON form as it is.
    const history: unknown = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! } }, history, file),
    ).resolves.toBeUndefined();
  });
});
