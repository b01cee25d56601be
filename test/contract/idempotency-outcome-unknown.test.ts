import type { TestService } from '../support/service';
import type { LifecycleWorld } from '../support/subscriptions';
import { eventsOf, key, path, startCommandWorld, withKey } from './support/idempotency';

/** Idempotency-Key when no worker answers: 503, and the retry with the same key gets the real result once. */
describe('Idempotency-Key on commands, Set A', () => {
  let svc: TestService;
  let w: LifecycleWorld;
  beforeAll(async () => {
    ({ svc, w } = await startCommandWorld('A'));
  }, 120_000);
  afterAll(() => svc?.stop());

  it('answers 503 COMMAND_OUTCOME_UNKNOWN when no worker answers, and the retry with the same key gets the real result once', async () => {
    const s = await w.inReviewByWire();
    const k = key();
    const approve = () => w.api.post(path(s.id, 'approve'), w.staff.token, {}, withKey(k));
    await svc.stopWorker();
    let first;
    try {
      first = await approve();
    } finally {
      await svc.startWorker();
    }
    expect(first.status).toBe(503);
    expect(first.body.error.code).toBe('COMMAND_OUTCOME_UNKNOWN');
    expect(Number(first.headers.get('retry-after'))).toBeGreaterThan(0);
    // Retry as a client would, on the answer it observes (no sleeps), until the outcome is known.
    let retry = await approve();
    for (let i = 0; retry.status === 503 && i < 20; i++) retry = await approve();
    expect(retry.status).toBe(200);
    expect(retry.body.data.status).toBe('approved');
    expect(await eventsOf(w, s.id, 'subscription.approved')).toHaveLength(1);
    const replay = await approve();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(retry.body);
  });
});
