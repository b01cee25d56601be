import { supportedEventTypes } from '../../domain/events';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';

const PATHS = {
  A: { endpoints: 'webhook-endpoints', deliveries: 'webhook-deliveries' },
  B: { endpoints: 'webhooks', deliveries: 'deliveries' },
} as const;

describe.each(['A', 'B'] as const)('Set %s: webhook endpoint management (spec §4.3)', (set) => {
  let svc: TestService;
  let api: ReturnType<typeof http>;
  let staff: Actor;
  const base = `/notifications/${PATHS[set].endpoints}`;
  const register = (body: unknown, token = staff.token) => api.post(base, token, body);

  beforeAll(async () => {
    svc = await startService({ set, env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } });
    api = http(svc.baseUrl);
    staff = await actor(svc, newOrg(), ['staff']);
  });
  afterAll(() => svc.stop());

  it('registers an endpoint with 201 and returns its signing secret once', async () => {
    const res = await register({
      url: 'https://hooks.example.com/tranche',
      description: 'ops',
      eventTypes: ['subscription.created'],
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: 'https://hooks.example.com/tranche',
      description: 'ops',
      eventTypes: ['subscription.created'],
      status: 'enabled',
      disabled_reason: null,
      disabled_at: null,
      success_rate: { window_hours: 24, attempts: 0, succeeded: 0, rate: null },
      previous_secret_expires_at: null,
      ordering: 'none',
      // The deployment's default concurrency, no rate limit, a closed circuit.
      max_in_flight: 32,
      rate_limit_per_second: null,
      // No traceparent header unless asked for.
      send_traceparent: false,
      // No transport authentication unless given; the signature alone.
      authentication: null,
      // No static headers unless given (docs/decisions/0400-custom-headers-per-endpoint.md).
      headers: {},
      // Every event it subscribes to unless filtered (docs/decisions/0398-payload-filters.md).
      filter: null,
      // The spec's shape unless pinned to another (docs/decisions/0420-versioned-payloads.md).
      payload_version: '1',
      circuit: { state: 'closed', consecutive_failures: 0, opened_at: null, next_probe_at: null },
      // Standard base64 of 32 bytes: what the Standard Webhooks libraries decode their key from.
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const got = await api.get(`${base}/${res.body.data.id}`, staff.token);
    expect(got.status).toBe(200);
    expect(got.body.data).not.toHaveProperty('signing_secret');
    const listed = await api.get(base, staff.token);
    expect(JSON.stringify(listed.body)).not.toContain(res.body.data.signing_secret);
  });

  it('stores the secret sealed with AES-256-GCM, never in the clear', async () => {
    const res = await register({ url: 'https://hooks.example.com/sealed', description: '', eventTypes: ['*'] });
    const [row] = await svc.orm.em
      .getConnection()
      .execute<{ secret_ciphertext: string }[]>('select secret_ciphertext from webhook_endpoints where id = ?', [
        res.body.data.id,
      ]);
    expect(row!.secret_ciphertext).toMatch(/^v2:dev:/); // sealed value names its key (keyring)
    expect(row!.secret_ciphertext).not.toContain(res.body.data.signing_secret);
    expect(row!.secret_ciphertext).not.toContain(res.body.data.signing_secret.slice(6, 20));
  });

  it(`answers 404 on the other set's path segment`, async () => {
    const other = set === 'A' ? 'webhooks' : 'webhook-endpoints';
    const res = await api.get(`/notifications/${other}`, staff.token);
    expect(res.status).toBe(404);
  });

  it('refuses an unknown event type with 400 listing the valid ones', async () => {
    const res = await register({
      url: 'https://hooks.example.com/x',
      description: '',
      eventTypes: ['subscription.created', 'nope.nothing'],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('UNKNOWN_EVENT_TYPE');
    expect(res.body.error.details.unknown).toEqual(['nope.nothing']);
    expect(res.body.error.details.valid).toEqual(['*', ...supportedEventTypes(set)]);
  });

  it(`accepts only this set's types (${set === 'A' ? 'no shares.issued' : 'shares.issued'})`, async () => {
    const res = await register({ url: 'https://hooks.example.com/s', description: '', eventTypes: ['shares.issued'] });
    expect(res.status).toBe(set === 'B' ? 201 : 400);
  });

  it('refuses plain http to a public host and credentials in the url', async () => {
    for (const url of [
      'http://hooks.example.com/x',
      'ftp://hooks.example.com/x',
      'https://user:pw@hooks.example.com/x',
    ]) {
      const res = await register({ url, description: '', eventTypes: ['*'] });
      expect({ url, status: res.status, code: res.body.error.code }).toEqual({
        url,
        status: 400,
        code: 'INVALID_WEBHOOK_URL',
      });
    }
  });

  it('accepts plain http to loopback when WEBHOOK_ALLOW_INSECURE_LOOPBACK is on', async () => {
    const res = await register({ url: 'http://127.0.0.1:9/hook', description: '', eventTypes: ['*'] });
    expect(res.status).toBe(201);
  });

  it('updates url and description with PATCH and keeps the rest', async () => {
    const { body } = await register({
      url: 'https://a.example.com/',
      description: 'before',
      eventTypes: ['subscription.signed'],
    });
    const res = await api.patch(`${base}/${body.data.id}`, staff.token, {
      description: 'after',
      url: 'https://b.example.com/hook',
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: body.data.id,
      url: 'https://b.example.com/hook',
      description: 'after',
      eventTypes: ['subscription.signed'],
    });
    expect((await api.patch(`${base}/${body.data.id}`, staff.token, { url: 'http://example.com/' })).status).toBe(400);
    expect((await api.patch(`${base}/${body.data.id}`, staff.token, {})).status).toBe(422);
  });

  it('turns send_traceparent on at registration and off and on with PATCH', async () => {
    const { body } = await register({
      url: 'https://a.example.com/',
      description: '',
      eventTypes: ['subscription.signed'],
      sendTraceparent: true,
    });
    expect(body.data.send_traceparent).toBe(true);
    const off = await api.patch(`${base}/${body.data.id}`, staff.token, { sendTraceparent: false });
    expect(off.body.data).toMatchObject({ send_traceparent: false, url: 'https://a.example.com/' });
    const on = await api.patch(`${base}/${body.data.id}`, staff.token, { sendTraceparent: true });
    expect((await api.get(`${base}/${on.body.data.id}`, staff.token)).body.data.send_traceparent).toBe(true);
    expect((await api.patch(`${base}/${body.data.id}`, staff.token, { sendTraceparent: 'yes' })).status).toBe(422);
  });

  it('reads and replaces the subscribed event types', async () => {
    const { body } = await register({
      url: 'https://a.example.com/',
      description: '',
      eventTypes: ['subscription.signed'],
    });
    const path = `${base}/${body.data.id}/subscriptions`;
    expect((await api.get(path, staff.token)).body.data).toEqual({ eventTypes: ['subscription.signed'] });
    const put = await api.put(path, staff.token, {
      eventTypes: ['subscription.approved', 'test.ping', 'subscription.approved'],
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toEqual({ eventTypes: ['subscription.approved', 'test.ping'] });
    expect((await api.put(path, staff.token, { eventTypes: ['*', 'subscription.signed'] })).body.data).toEqual({
      eventTypes: ['*'],
    });
    expect((await api.put(path, staff.token, { eventTypes: ['bogus'] })).status).toBe(400);
  });

  it('rotates the secret: a new one, returned once', async () => {
    const { body } = await register({ url: 'https://a.example.com/', description: '', eventTypes: ['*'] });
    const res = await api.post(`${base}/${body.data.id}/rotate-secret`, staff.token);
    expect(res.status).toBe(200);
    expect(res.body.data.signing_secret).toMatch(/^whsec_/);
    expect(res.body.data.signing_secret).not.toBe(body.data.signing_secret);
  });

  it('deletes with 204; the endpoint is then 404 everywhere', async () => {
    const { body } = await register({ url: 'https://a.example.com/', description: '', eventTypes: ['*'] });
    expect((await api.delete(`${base}/${body.data.id}`, staff.token)).status).toBe(204);
    expect((await api.get(`${base}/${body.data.id}`, staff.token)).status).toBe(404);
    expect((await api.delete(`${base}/${body.data.id}`, staff.token)).status).toBe(404);
    expect((await api.post(`${base}/${body.data.id}/test`, staff.token)).status).toBe(404);
  });

  it('sends a test event only to an enabled endpoint of the caller: 409 disabled and 404 elsewhere store no event', async () => {
    const { body } = await register({ url: 'https://t.example.com/', description: '', eventTypes: ['*'] });
    const id = body.data.id as string;
    const events = () =>
      svc.orm.em
        .getConnection()
        .getKnex()('events')
        .where({ type: 'test.ping' })
        .whereRaw(`data->>'endpoint_id' = ?`, [id]);
    // Requests that arrive together are published by one statement; each gets its own event and delivery.
    const sent = await Promise.all(Array.from({ length: 12 }, () => api.post(`${base}/${id}/test`, staff.token)));
    expect(sent.map((r) => r.status)).toEqual(Array(12).fill(202));
    expect(new Set(sent.map((r) => r.body.data.delivery_id)).size).toBe(12);
    expect(await events()).toHaveLength(12);

    const stranger = await actor(svc, newOrg(), ['staff']);
    const elsewhere = await api.post(`${base}/${id}/test`, stranger.token);
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.error.code).toBe('NOT_FOUND');

    expect((await api.patch(`${base}/${id}`, staff.token, { status: 'disabled' })).status).toBe(200);
    const disabled = await api.post(`${base}/${id}/test`, staff.token);
    expect(disabled.status).toBe(409);
    expect(disabled.body.error.code).toBe('ENDPOINT_DISABLED');
    expect(await events()).toHaveLength(12);
  });

  it('pages the list with a cursor, newest first', async () => {
    const own = await actor(svc, newOrg(), ['admin']);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await register({ url: `https://p${i}.example.com/`, description: '', eventTypes: ['*'] }, own.token)).body.data
          .id,
      );
    const first = await api.get(`${base}?limit=2`, own.token);
    expect(first.body.data.items.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    const second = await api.get(`${base}?limit=2&cursor=${first.body.data.next_cursor}`, own.token);
    expect(second.body.data).toEqual({ items: [expect.objectContaining({ id: ids[0] })], next_cursor: null });
  });

  it('scopes endpoints to the caller organisation and to staff or admins', async () => {
    const { body } = await register({ url: 'https://a.example.com/', description: '', eventTypes: ['*'] });
    const stranger = await actor(svc, newOrg(), ['staff']);
    expect((await api.get(`${base}/${body.data.id}`, stranger.token)).status).toBe(404);
    const investor = await actor(svc, staff.orgId, ['investor']);
    expect((await api.get(base, investor.token)).status).toBe(403);
    expect((await api.get(base)).status).toBe(401);
  });

  it('lists the supported event types of the set', async () => {
    const res = await api.get('/notifications/event-types', staff.token);
    expect(res).toMatchObject({
      status: 200,
      body: { success: true, data: { eventTypes: [...supportedEventTypes(set)] } },
    });
  });
});
