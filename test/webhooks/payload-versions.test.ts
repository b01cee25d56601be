import { randomUUID } from 'node:crypto';
import type { ServiceEvent } from '../../domain/events';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { until } from '../support/wait';
import { PATHS } from './support/hooks';
import { publish } from './support/publish';
import { Receiver, type ReceivedDelivery } from './support/receiver';

type Envelope = { event_id: string; event_type: string; version: string; data: Record<string, unknown> };

/**
 * Versioned payloads (docs/decisions/0420-versioned-payloads.md): each endpoint receives an event in the version it
 * is pinned to, signed over those bytes; a PATCH changes later deliveries only, and a retry resends the same bytes;
 * an unknown version is refused naming the field and the versions served. Both delivery shapes (scripts/test.sh).
 */
describe('versioned payloads', () => {
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;
  let api: ReturnType<typeof http>;
  const { endpoints, deliveries } = PATHS.A;
  const knex = () => svc.orm.em.getConnection().getKnex();

  beforeAll(async () => {
    [svc, receiver] = await Promise.all([
      startService({ set: 'A', env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } }),
      Receiver.start(),
    ]);
    api = http(svc.baseUrl);
    staff = await actor(svc, newOrg(), ['staff']);
  });
  afterAll(async () => {
    await svc.stop();
    await receiver.stop();
  });

  const register = async (hook: string, payloadVersion?: unknown, responses?: number[]) => {
    const res = await api.post(endpoints, staff.token, {
      url: receiver.url(hook),
      description: hook,
      eventTypes: ['subscription.approved'],
      ...(payloadVersion !== undefined && { payloadVersion }),
    });
    if (res.status === 201)
      await receiver.plan(hook, { secret: res.body.data.signing_secret, ...(responses && { responses }) });
    return res;
  };
  const approved = (): ServiceEvent => ({
    id: randomUUID(),
    type: 'subscription.approved',
    source: 'service.issuance',
    orgId: staff.orgId,
    occurredAt: new Date().toISOString(),
    data: {
      id: randomUUID(),
      units_subscribed: 2,
      price_per_unit: '250.00',
      total_amount: '500.00',
      currency: 'USD',
      status: 'approved',
      sequence: 3,
    },
  });
  const bodies = async (hook: string, eventId: string) =>
    (await receiver.received(hook)).filter((d) => (JSON.parse(d.body) as Envelope).event_id === eventId);
  const arrived = async (hook: string, eventId: string, n = 1): Promise<ReceivedDelivery[]> =>
    until(`${hook} to get ${eventId}`, async () => {
      const got = await bodies(hook, eventId);
      return got.length >= n ? got : undefined;
    });

  it('sends one event in each endpoint’s pinned version, signed over the bytes sent', async () => {
    const two = await register('versions-two', '2');
    const one = await register('versions-one', '1');
    const unpinned = await register('versions-default');
    expect([two.status, one.status, unpinned.status]).toEqual([201, 201, 201]);
    expect([two.body.data.payload_version, one.body.data.payload_version, unpinned.body.data.payload_version]).toEqual([
      '2',
      '1',
      '1',
    ]);
    expect((await api.get(`${endpoints}/${two.body.data.id}`, staff.token)).body.data.payload_version).toBe('2');

    const event = approved();
    await publish(svc, [event]);
    const [[v2], [v1], [plain]] = await Promise.all([
      arrived('versions-two', event.id),
      arrived('versions-one', event.id),
      arrived('versions-default', event.id),
    ]);
    expect([v2!.verified, v1!.verified, plain!.verified]).toEqual([true, true, true]);

    // Version 1 is the spec's shape exactly (§6.3): money as decimal strings beside the currency.
    const spec = JSON.parse(v1!.body) as Envelope;
    expect(Object.keys(spec)).toEqual(['event_id', 'event_type', 'source', 'org_id', 'version', 'timestamp', 'data']);
    expect(spec).toMatchObject({ version: '1', data: { total_amount: '500.00', price_per_unit: '250.00' } });
    expect(plain!.body).toBe(v1!.body);

    // Version 2: the same event, its money objects carrying their currency, the envelope naming the version.
    const next = JSON.parse(v2!.body) as Envelope;
    expect(next).toEqual({
      ...spec,
      version: '2',
      data: {
        ...spec.data,
        price_per_unit: { amount: '250.00', currency: 'USD' },
        total_amount: { amount: '500.00', currency: 'USD' },
      },
    });

    // The delivery's detail shows the version and the bytes the endpoint got.
    const [delivery] = await knex()('webhook_deliveries').where({ event_id: event.id, endpoint_id: two.body.data.id });
    const detail = await api.get(`${deliveries}/${delivery.id}`, staff.token);
    expect([detail.body.data.payload_version, detail.body.data.signed_body]).toEqual(['2', v2!.body]);
  });

  it('changes the pin by PATCH for later events, audited; a retry resends the bytes first sent', async () => {
    // Its first attempt fails: the retry comes after the PATCH.
    const made = await register('versions-patched', '2', [500]);
    const id = made.body.data.id as string;
    const first = approved();
    await publish(svc, [first]);
    const [failed] = await arrived('versions-patched', first.id);
    expect(failed!.status).toBe(500);

    const patched = await api.patch(`${endpoints}/${id}`, staff.token, { payloadVersion: '1' });
    expect([patched.status, patched.body.data.payload_version]).toEqual([200, '1']);
    const audit = await knex()('audit_events')
      .where({ subject_id: id, action: 'webhook_endpoint.update', outcome: 'succeeded' })
      .select('before', 'after');
    expect(audit.map((a) => [a.before.payload_version, a.after.payload_version])).toEqual([['2', '1']]);

    const [delivery] = await knex()('webhook_deliveries').where({ event_id: first.id, endpoint_id: id });
    expect((await api.post(`${deliveries}/${delivery.id}/retry`, staff.token)).status).toBe(202);
    const both = await arrived('versions-patched', first.id, 2);
    expect(both.map((d) => [d.status, d.verified])).toEqual([
      [500, true],
      [200, true],
    ]);
    expect(both[1]!.body).toBe(both[0]!.body);
    expect((JSON.parse(both[1]!.body) as Envelope).version).toBe('2');

    const later = approved();
    await publish(svc, [later]);
    const [sent] = await arrived('versions-patched', later.id);
    expect(JSON.parse(sent!.body)).toMatchObject({ version: '1', data: { total_amount: '500.00' } });
  });

  it('refuses a version it does not serve, naming the field and the versions it does', async () => {
    const expectRefused = (res: { status: number; body: any }) => {
      expect([res.status, res.body.error?.code]).toEqual([422, 'VALIDATION_FAILED']);
      expect(res.body.error.details).toEqual([
        expect.objectContaining({ path: 'payloadVersion', message: expect.stringContaining('supported: 1, 2') }),
      ]);
    };
    expectRefused(await register('versions-refused', '3'));
    expectRefused(await register('versions-refused', 2));
    const made = await register('versions-kept');
    expectRefused(await api.patch(`${endpoints}/${made.body.data.id}`, staff.token, { payloadVersion: 'v2' }));
    expect((await api.get(`${endpoints}/${made.body.data.id}`, staff.token)).body.data.payload_version).toBe('1');
  });

  it('lists both versions in the catalog, and the test path sends a type’s example in the pinned version', async () => {
    const catalog = await api.get('/notifications/event-catalog', staff.token);
    const entry = (catalog.body.data.items as any[]).find((i) => i.event_type === 'subscription.approved');
    expect(entry.payload_versions).toEqual(['1', '2']);
    expect(entry.versions.map((v: any) => [v.version, v.status, v.sunset_at])).toEqual([
      ['1', 'supported', null],
      ['2', 'current', null],
    ]);
    const [v1, v2] = entry.versions;
    expect(v1.example).toEqual(entry.example);
    expect(v2.example.data.total_amount).toEqual({
      amount: v1.example.data.total_amount,
      currency: expect.any(String),
    });

    const made = await register('versions-example', '2');
    const sent = await api.post(`${endpoints}/${made.body.data.id}/test`, staff.token, {
      event_type: 'subscription.approved',
    });
    expect(sent.status).toBe(202);
    const [got] = await arrived('versions-example', sent.body.data.event_id);
    expect(got!.verified).toBe(true);
    const body = JSON.parse(got!.body) as Envelope;
    expect([body.version, body.data]).toEqual(['2', v2.example.data]);
  });
});
