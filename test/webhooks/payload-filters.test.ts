import { randomUUID } from 'node:crypto';
import type { ServiceEvent } from '../../domain/events';
import type { Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { until } from '../support/wait';
import { PATHS } from './support/hooks';
import { publish } from './support/publish';
import type { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';

/**
 * Payload filters (docs/decisions/0398-payload-filters.md): an endpoint gets only the events whose data its
 * filter matches, evaluated in the publish statement; a wrong filter is refused where it is wrong; a test
 * ping is never filtered; replay missing honours the filter. Both delivery shapes (scripts/test.sh).
 */
describe('payload filters', () => {
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;
  let api: ReturnType<typeof http>;
  const base = PATHS.A.endpoints;

  beforeAll(async () => {
    ({ svc, receiver, api, staff } = await startWebhookStack('A'));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  const register = async (hook: string, filter?: unknown) => {
    const res = await api.post(base, staff.token, {
      url: receiver.url(hook),
      description: hook,
      eventTypes: ['subscription.approved', 'subscription.funded'],
      ...(filter !== undefined && { filter }),
    });
    if (res.status !== 201) return res;
    await receiver.plan(hook, { secret: res.body.data.signing_secret });
    return res;
  };
  const event = (mark: number, data: Record<string, unknown>, type = 'subscription.approved'): ServiceEvent => ({
    id: randomUUID(),
    type,
    source: 'service.issuance',
    orgId: staff.orgId,
    occurredAt: new Date().toISOString(),
    data: { id: randomUUID(), mark, ...data },
  });
  const marks = async (hook: string) =>
    (await receiver.received(hook))
      .filter((d) => d.status === 200)
      .map((d) => JSON.parse(d.body) as { event_type: string; data: { mark?: number } })
      .filter((b) => b.event_type !== 'test.ping')
      .map((b) => b.data.mark!)
      .sort((a, b) => a - b);

  it('delivers to each endpoint only the events its filter matches', async () => {
    const usd = await register('filter-usd', { path: 'amount.currency', eq: 'USD' });
    const either = await register('filter-any', {
      any: [
        {
          all: [
            { path: 'amount.currency', in: ['EUR', 'GBP'] },
            { path: 'amount.units', eq: 500 },
          ],
        },
        { path: 'flagged', exists: true },
      ],
    });
    const none = await register('filter-none');
    expect([usd.status, either.status, none.status]).toEqual([201, 201, 201]);
    expect(usd.body.data.filter).toEqual({ path: 'amount.currency', eq: 'USD' });
    expect(none.body.data.filter).toBeNull();

    await publish(svc, [
      event(1, { amount: { currency: 'USD', units: 500 } }),
      event(2, { amount: { currency: 'EUR', units: 500 } }),
      event(3, { amount: { currency: 'EUR', units: 100 } }),
      event(4, { amount: { currency: 'GBP', units: 500 } }, 'subscription.funded'),
      event(5, { flagged: false }),
      event(6, { amount: 'USD' }),
    ]);
    await receiver.waitFor('filter-none', 6);
    await until('the filtered endpoints to have theirs', async () =>
      (await marks('filter-usd')).length === 1 && (await marks('filter-any')).length === 3 ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(await marks('filter-usd')).toEqual([1]);
    expect(await marks('filter-any')).toEqual([2, 4, 5]);
    expect(await marks('filter-none')).toEqual([1, 2, 3, 4, 5, 6]);

    // A test ping is for the endpoint itself: never filtered.
    const ping = await api.post(`${base}/${usd.body.data.id}/test`, staff.token);
    expect(ping.status).toBe(202);
    await until('the ping to arrive', async () =>
      (await receiver.received('filter-usd')).some((d) => JSON.parse(d.body).event_type === 'test.ping')
        ? true
        : undefined,
    );

    // PATCH replaces the filter; null takes it away.
    const patched = await api.patch(`${base}/${usd.body.data.id}`, staff.token, { filter: null });
    expect(patched.body.data.filter).toBeNull();
    await publish(svc, [event(7, { amount: { currency: 'JPY' } })]);
    await until('the unfiltered endpoint to get it', async () =>
      (await marks('filter-usd')).includes(7) ? true : undefined,
    );
  });

  it('refuses a filter it cannot read, naming where, in the one envelope', async () => {
    const refused = async (filter: unknown) => {
      const res = await register('filter-refused', filter);
      expect([res.status, res.body.error?.code]).toEqual([422, 'VALIDATION_FAILED']);
      return (res.body.error.details as { path: string; message: string }[]).map((d) => `${d.path}: ${d.message}`);
    };
    expect(await refused({ path: 'a-b', eq: 1 })).toEqual([expect.stringMatching(/^filter\.path: a path is/)]);
    expect(
      await refused({
        all: [
          { path: 'a', eq: 1 },
          { path: 'b', like: 'x' },
        ],
      }),
    ).toEqual([expect.stringMatching(/^filter\.all\.1: a filter is \{path, eq\}/)]);
    expect(await refused({ any: [] })).toEqual([expect.stringMatching(/^filter\.any: any takes a list/)]);
    expect(await refused({ path: 'a', in: [1, { x: 1 }] })).toEqual([expect.stringMatching(/^filter\.in\.1: each is/)]);
    expect(await refused({ path: 'a', eq: 1e16 })).toEqual([expect.stringMatching(/^filter\.eq: eq takes/)]);
    const deep = { all: [{ all: [{ all: [{ all: [{ path: 'a', eq: 1 }] }] }] }] };
    expect(await refused(deep)).toEqual([expect.stringMatching(/nests at most 4 deep \(5 given\)/)]);
    const many = { any: Array.from({ length: 21 }, (_, i) => ({ path: `k${i}`, exists: true })) };
    expect(await refused(many)).toEqual([expect.stringMatching(/at most 20 conditions \(21 given\)/)]);
    expect(await refused('currency == USD')).toEqual([expect.stringMatching(/^filter: a filter is/)]);
  });

  it('replays to a filtered endpoint only what its filter matches', async () => {
    const since = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    await publish(svc, [event(101, { amount: { currency: 'USD' } }), event(102, { amount: { currency: 'EUR' } })]);
    const late = await register('filter-late', { path: 'amount.currency', eq: 'EUR' });
    const path = `${base}/${late.body.data.id}/recoveries`;
    const started = await api.post(path, staff.token, { since, mode: 'missing' });
    expect(started.body.data).toMatchObject({ total: 1 });
    await until('the replay to arrive', async () => ((await marks('filter-late')).length ? true : undefined));
    expect(await marks('filter-late')).toEqual([102]);
  });
});
