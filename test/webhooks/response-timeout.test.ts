import { randomUUID } from 'node:crypto';
import type { Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import type { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';
import { until } from '../support/wait';
import { PATHS, registerHook } from './support/hooks';

/**
 * spec §6.5 / §8: an endpoint answers 2xx within 30 seconds or the attempt failed. A receiver that
 * holds its answer 31 s gets a failed attempt (no status, the timeout as its error), and the
 * delivery goes on to attempt 2 on the schedule, which succeeds once the receiver answers in time.
 */
describe.each(['A', 'B'] as const)('Set %s: the 30-second response limit (spec §6.5)', (set) => {
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;

  beforeAll(async () => {
    ({ svc, receiver, staff } = await startWebhookStack(set));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  it('fails an attempt whose answer takes 31 s, then retries it on the schedule', async () => {
    const api = http(svc.baseUrl);
    const hook = `slow-${randomUUID().slice(0, 8)}`;
    const endpoint = await registerHook(svc, receiver, staff, hook, ['*'], { delayMs: 31_000 });
    const ping = await api.post(`${PATHS[set].endpoints}/${endpoint.id}/test`, staff.token);
    expect(ping.status).toBe(202);
    const deliveryId: string = ping.body.data.delivery_id;
    const detail = async () => (await api.get(`${PATHS[set].deliveries}/${deliveryId}`, staff.token)).body.data;

    await receiver.waitFor(hook, 1);
    // From now on the receiver answers at once: the retry must find it so.
    await receiver.plan(hook, { secret: endpoint.secret, defaultStatus: 200 });

    const failed = await until(
      'attempt 1 recorded, the delivery failed',
      async () => {
        const d = await detail();
        // The attempt's record and the delivery's status land a moment apart: wait for both.
        return d?.status === 'failed' && d.attempts?.[0]?.duration_ms != null ? d : undefined;
      },
      { timeoutMs: 45_000 },
    );
    const [first] = failed.attempts;
    expect(first).toMatchObject({ number: 1, response_status: null });
    expect(first.error).toMatch(/timed out after 30 s/);
    expect(first.duration_ms).toBeGreaterThanOrEqual(29_900);
    expect(first.duration_ms).toBeLessThan(31_000);
    expect(failed.status).toBe('failed');

    // Attempt 2 comes 30 s after attempt 1 (spec §6.5) and is answered at once.
    const delivered = await until(
      'attempt 2 succeeded',
      async () => {
        const d = await detail();
        return d?.status === 'success' ? d : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(delivered.attempts.map((a: { number: number }) => a.number)).toEqual([1, 2]);
    expect(delivered.attempts[1].response_status).toBe(200);
    const gapMs = Date.parse(delivered.attempts[1].attempted_at) - Date.parse(first.attempted_at) - first.duration_ms;
    expect(gapMs).toBeGreaterThanOrEqual(29_000);
  }, 150_000);
});
