import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';

/**
 * Temporal admits at most 10 Updates in flight per workflow and refuses the 11th with
 * RESOURCE_EXHAUSTED; commands are Updates (docs/decisions/0280-temporal-updates-for-commands.md),
 * so a burst on one subscription must still be answered one by one: the first wins, the rest are
 * refused as the state they then meet refuses them, never a 5xx
 * (docs/decisions/0367-temporal-limits-kept.md).
 */
describe('many commands on one subscription at once', () => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    svc = await startService({ set: 'A' });
    w = await lifecycleWorld(svc);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const answers = (replies: { status: number; body: any }[]) => {
    const counts: Record<string, number> = {};
    for (const r of replies) {
      const key = `${r.status} ${r.body?.error?.code ?? r.body?.data?.status}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  };

  it('answers 30 concurrent approvals with one 200 and 29 × 409 INVALID_TRANSITION', async () => {
    const s = await w.inReviewByWire();
    const replies = await Promise.all(Array.from({ length: 30 }, () => w.post(s.id, 'approve', w.staff)));
    expect(answers(replies)).toEqual({ '200 approved': 1, '409 INVALID_TRANSITION': 29 });
  });

  it('answers 30 concurrent signatures, every one of which its validator lets in, with one 200 and 29 × 409', async () => {
    const s = await w.create();
    await w.post(s.id, 'request-signature', w.investor);
    const replies = await Promise.all(Array.from({ length: 30 }, () => w.sign(s.id)));
    expect(answers(replies)).toEqual({ '200 pending_payment': 1, '409 INVALID_TRANSITION': 29 });
  });
});
