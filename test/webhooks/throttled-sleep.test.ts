import { actor, newOrg } from '../support/fixtures';
import type { http } from '../support/http';
import type { TestService } from '../support/service';
import { deliveryWorkflowId } from '../../domain/webhook-messages';
import { PATHS } from './support/hooks';
import { Receiver } from './support/receiver';
import { until } from '../support/wait';
import { startWebhookStack, stopWebhookStack, throttledFailingPings } from './support/stack';

/**
 * A throttled retry sleeps until the start reserved for it (docs/decisions/0293-throttled-retries-sleep.md):
 * one local activity to learn its turn and one to send, whatever the wait, instead of one poll
 * (an attempt row, the flow row locked, history events) every 0.77 s.
 */
describe('throttled retries sleep, they do not poll', () => {
  const set = 'A';
  let svc: TestService;
  let receiver: Receiver;
  let api: ReturnType<typeof http>;

  beforeAll(async () => {
    ({ svc, receiver, api } = await startWebhookStack(set, { WEBHOOK_CIRCUIT_FAILURES: '1000' }));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  it('retries of one endpoint at 1/s each wait on one timer and still keep the rate', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const { endpoint: hook, ids } = await throttledFailingPings({ svc, receiver, api }, staff, 'throttled', 6);
    const handle = (id: string) => svc.temporal.workflow.getHandle(deliveryWorkflowId(id));
    // Each failed its first attempt and waits, on its schedule, for the second.
    for (const id of ids)
      await until(
        `delivery workflow ${id} waiting for its second attempt`,
        async () =>
          (
            await handle(id)
              .describe()
              .catch(() => undefined)
          )?.status.name === 'RUNNING' || undefined,
      );
    await receiver.plan('throttled', { secret: hook.secret, defaultStatus: 200 });
    const from = Date.now();
    // All six asked for at once: the rate limit lets one a second through.
    await Promise.all(ids.map((id) => api.post(`${PATHS[set].deliveries}/${id}/retry`, staff.token)));
    for (const id of ids) expect(await handle(id).result()).toBe('success');

    const arrivals = (await receiver.received('throttled')).filter((d) => d.at >= from && d.status === 200);
    expect(arrivals).toHaveLength(6);
    // As the receiver counts them (docs/decisions/0178-endpoint-rate-limit.md): no start goes before a
    // second after the POST before it ended, so however long a request's transit (a loaded CI machine
    // once put two arrivals 892 ms apart, before docs/decisions/0339-one-second-rule-at-the-gate.md),
    // two arrivals are a second apart on the one clock.
    const at = arrivals.map((d) => d.at).sort((a, b) => a - b);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(999);
    // Seen failing before the change: the last ones made 6 to 8 attempt calls each (one poll every 0.77 s).
    // Now one to learn its turn and one to send; a wake later than its turn still sends at the
    // worker's next start, and one that finds the POST before it still open takes one fresh turn,
    // never a poll. The retry's calls only: in `workflow` shape the first attempts were calls too.
    for (const id of ids) {
      const events = (await handle(id).fetchHistory()).events ?? [];
      const recordedAt = (e: (typeof events)[number]) =>
        Number(e.eventTime!.seconds) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6;
      // Local activity markers only: the status attribute's patch() writes a marker of its own.
      const calls = events.filter(
        (e) =>
          e.markerRecordedEventAttributes &&
          e.markerRecordedEventAttributes.markerName !== 'core_patch' &&
          recordedAt(e) >= from,
      ).length;
      expect({ id, atMostThreeCalls: calls <= 3 }).toEqual({ id, atMostThreeCalls: true });
    }
  });
});
