import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { PATHS, registerHook } from './support/hooks';
import { Receiver } from './support/receiver';
import { until } from '../support/wait';

/**
 * Issue 28, item 1 (docs/decisions/0309-slots-taken-at-the-post.md): a 2xx that takes most of an
 * attempt's 30 s counts against the endpoint's health as a timeout does (its circuit, its "failing
 * since"), while the delivery itself is a success. Seen failing before the change: the circuit
 * stayed closed with no failure counted, and "failing since" stayed unset.
 */
describe('a slow success counts against the endpoint’s health (issue 28)', () => {
  const set = 'A';
  let svc: TestService;
  let receiver: Receiver;
  let api: ReturnType<typeof http>;
  const base = PATHS[set].endpoints;

  beforeAll(async () => {
    [svc, receiver] = await Promise.all([
      startService({ set, env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true', WEBHOOK_CIRCUIT_FAILURES: '2' } }),
      Receiver.start(),
    ]);
    api = http(svc.baseUrl);
  });
  afterAll(async () => {
    await svc.stop();
    await receiver.stop();
  });

  it('opens the circuit of an endpoint that answers 200 only after 22 s, and records the deliveries as successes', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const slow = await registerHook(svc, receiver, staff, 'slow-200', ['*'], { delayMs: 22_000 });
    const fast = await registerHook(svc, receiver, staff, 'fast-200', ['*']);
    const ping = async (id: string): Promise<string> =>
      (await api.post(`${base}/${id}/test`, staff.token)).body.data.delivery_id;
    const delivery = (id: string) => api.get(`${PATHS[set].deliveries}/${id}`, staff.token).then((r) => r.body.data);
    const endpoint = (id: string) => api.get(`${base}/${id}`, staff.token).then((r) => r.body.data);

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
