import { actor, newOrg } from '../support/fixtures';
import type { http } from '../support/http';
import type { TestService } from '../support/service';
import { registerHook } from './support/hooks';
import { Receiver } from './support/receiver';
import { until } from '../support/wait';
import { deliveryDetail, endpointDetail, startWebhookStack, stopWebhookStack, testPing } from './support/stack';

/**
 * Slots taken at the POST (docs/decisions/0309-slots-taken-at-the-post.md): a 2xx that takes most of an
 * attempt's 30 s counts against the endpoint's health as a timeout does (its circuit, its "failing
 * since"), while the delivery itself is a success. Seen failing before the change: the circuit
 * stayed closed with no failure counted, and "failing since" stayed unset.
 */
describe('a slow success counts against the endpoint’s health', () => {
  const set = 'A';
  let svc: TestService;
  let receiver: Receiver;
  let api: ReturnType<typeof http>;

  beforeAll(async () => {
    ({ svc, receiver, api } = await startWebhookStack(set, { WEBHOOK_CIRCUIT_FAILURES: '2' }));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  it('opens the circuit of an endpoint that answers 200 only after 22 s, and records the deliveries as successes', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const slow = await registerHook(svc, receiver, staff, 'slow-200', ['*'], { delayMs: 22_000 });
    const fast = await registerHook(svc, receiver, staff, 'fast-200', ['*']);
    const ping = (id: string) => testPing(api, staff, id, set);
    const delivery = (id: string) => deliveryDetail(api, staff, id, set);
    const endpoint = (id: string) => endpointDetail(api, staff, id, set);

    const sent = await Promise.all([ping(slow.id), ping(slow.id), ping(fast.id), ping(fast.id)]);
    for (const id of sent) {
      const done = await until(
        `delivery ${id} a success`,
        async () => {
          const d = await delivery(id);
          return d?.status === 'success' ? d : undefined;
        },
        { timeoutMs: 45_000 },
      );
      expect(done.attempts).toMatchObject([{ number: 1, response_status: 200 }]);
    }
    const slowNow = await endpoint(slow.id);
    expect(slowNow.circuit).toMatchObject({ state: 'open', consecutive_failures: 2, opened_at: expect.any(String) });
    expect((await endpoint(fast.id)).circuit).toMatchObject({ state: 'closed', consecutive_failures: 0 });
    const knex = svc.orm.em.getConnection().getKnex();
    const rows: { id: string; failing_since: string | null }[] = await knex('webhook_endpoints')
      .whereIn('id', [slow.id, fast.id])
      .select('id', 'failing_since');
    const since = new Map(rows.map((r) => [r.id, r.failing_since]));
    expect(Date.parse(since.get(slow.id)!)).toBeLessThanOrEqual(Date.now());
    expect(since.get(fast.id)).toBeNull();
  }, 90_000);
});
