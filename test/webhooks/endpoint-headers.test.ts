import pino from 'pino';
import { logger } from '../../lib/runtime/logger';
import type { Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { until } from '../support/wait';
import { PATHS } from './support/hooks';
import type { Receiver, ReceivedDelivery } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';

/**
 * Static headers per endpoint (docs/decisions/0400-custom-headers-per-endpoint.md): every POST carries
 * them, in the delivery shape the environment names; a secret one's value reaches the receiver and
 * nowhere else (answers, the audit trail, attempt records, the log); refusals name the header.
 */
const SECRET = 'gw-key-7f3a9c1e5b2d4f60';
const base = PATHS.A.endpoints;

describe('custom headers per endpoint', () => {
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;
  let api: ReturnType<typeof http>;
  // Every line the service logs while this file runs: the secret value must be in none of them.
  const logged: string[] = [];
  const stream = (logger as unknown as Record<symbol, { write(s: string): unknown }>)[pino.symbols.streamSym]!;
  const write = stream.write.bind(stream);

  beforeAll(async () => {
    stream.write = (s: string) => {
      logged.push(s);
      return write(s);
    };
    ({ svc, receiver, api, staff } = await startWebhookStack('A'));
  });
  afterAll(async () => {
    stream.write = write;
    await stopWebhookStack({ svc, receiver });
  });

  const knex = () => svc.orm.em.getConnection().getKnex();

  const register = async (hook: string, headers?: unknown) => {
    const res = await api.post(base, staff.token, { url: receiver.url(hook), eventTypes: ['*'], headers });
    expect(res.status).toBe(201);
    await receiver.plan(hook, { secret: res.body.data.signing_secret });
    return res.body.data as { id: string; headers: unknown };
  };
  const ping = async (endpointId: string) => {
    const res = await api.post(`${base}/${endpointId}/test`, staff.token);
    expect(res.status).toBe(202);
    return res.body.data as { delivery_id: string };
  };
  /** The n-th delivery to the hook, once it has arrived. */
  const nth = async (hook: string, n: number): Promise<ReceivedDelivery> => (await receiver.waitFor(hook, n))[n - 1]!;

  it('sends the headers with every POST; the secret one reaches the receiver and no answer, record, audit entry or log', async () => {
    const made = await register('gateway', {
      'X-Api-Key': { value: SECRET, secret: true },
      'X-Team': { value: 'ops desk' },
    });
    expect(made.headers).toEqual({
      'X-Api-Key': { value: null, secret: true },
      'X-Team': { value: 'ops desk', secret: false },
    });
    const sent = await ping(made.id);
    const got = await nth('gateway', 1);
    expect(got.verified).toBe(true);
    expect(got.headers).toMatchObject({ 'x-api-key': SECRET, 'x-team': 'ops desk' });
    // The service's own headers are all still there.
    expect(got.headers['user-agent']).toBe('Service-Webhooks/1.0');
    expect(got.headers['webhook-id']).toBe(sent.delivery_id);

    // The attempt record: what was sent, the secret masked; the API and the table alike.
    const detail = await until(
      'the attempt recorded',
      async () => {
        const res = await api.get(`${PATHS.A.deliveries}/${sent.delivery_id}`, staff.token);
        return res.body.data?.attempts?.[0]?.request_headers ? res : null;
      },
      { timeoutMs: 30_000 },
    );
    expect(detail.body.data.attempts[0].request_headers).toMatchObject({
      'X-Api-Key': '[redacted]',
      'X-Team': 'ops desk',
    });
    const stored = await knex()('webhook_attempts').where({ delivery_id: sent.delivery_id }).select('request_headers');
    const endpointRow = await knex()('webhook_endpoints').where({ id: made.id }).first();
    expect(endpointRow.headers_secret_ciphertext).toEqual(expect.any(String));
    const audit = await knex()('audit_events').where({ subject_id: made.id }).select('before', 'after');
    expect(audit.map((a) => a.after?.headers)).toContainEqual({
      'X-Api-Key': { value: null, secret: true },
      'X-Team': { value: 'ops desk', secret: false },
    });
    // The capture sees the service's lines (its requests are logged), so its silence below means something.
    expect(logged.length).toBeGreaterThan(0);
    const read = await api.get(`${base}/${made.id}`, staff.token);
    const list = await api.get(base, staff.token);
    for (const [what, seen] of Object.entries({
      detail: detail.body,
      stored,
      endpointRow,
      audit,
      read: read.body,
      list: list.body,
      log: logged.join(''),
    }))
      expect([what, JSON.stringify(seen).includes(SECRET)]).toEqual([what, false]);
  });

  it('PATCH replaces the set, keeps a secret value left out, and null removes them all', async () => {
    const made = await register('replaced', {
      'X-Api-Key': { value: SECRET, secret: true },
      'X-Team': { value: 'ops' },
    });
    const patch = (headers: unknown) => api.patch(`${base}/${made.id}`, staff.token, { headers });

    const kept = await patch({ 'X-Team': { value: 'dev' }, 'x-api-key': { secret: true } });
    expect(kept.status).toBe(200);
    expect(kept.body.data.headers).toEqual({
      'X-Team': { value: 'dev', secret: false },
      'x-api-key': { value: null, secret: true },
    });
    await ping(made.id);
    expect((await nth('replaced', 1)).headers).toMatchObject({ 'x-api-key': SECRET, 'x-team': 'dev' });

    expect((await patch({ 'X-Other': { value: '1' } })).status).toBe(200);
    await ping(made.id);
    const second = (await nth('replaced', 2)).headers;
    expect(second['x-other']).toBe('1');
    expect([second['x-api-key'], second['x-team']]).toEqual([undefined, undefined]);

    // Nothing left to keep: the secret value must be given again.
    const nothing = await patch({ 'X-Api-Key': { secret: true } });
    expect(nothing.status).toBe(422);
    expect(nothing.body.error.details).toEqual([
      expect.objectContaining({
        path: 'headers.X-Api-Key',
        message: expect.stringContaining('no secret value to keep'),
      }),
    ]);
    // A plain header needs its value, on PATCH too.
    expect((await patch({ 'X-Team': {} })).status).toBe(422);

    const removed = await patch(null);
    expect(removed.body.data.headers).toEqual({});
    await ping(made.id);
    expect((await nth('replaced', 3)).headers['x-other']).toBeUndefined();
    const row = await knex()('webhook_endpoints').where({ id: made.id }).first();
    expect([row.headers, row.headers_secret_ciphertext]).toEqual([null, null]);

    // The audit entry of each change shows the set before and after, no secret value.
    const updates = await knex()('audit_events')
      .where({ subject_id: made.id, action: 'webhook_endpoint.update', outcome: 'succeeded' })
      .orderBy('seq')
      .select('before', 'after');
    expect(updates[0].before.headers).toEqual({
      'X-Api-Key': { value: null, secret: true },
      'X-Team': { value: 'ops', secret: false },
    });
    expect(updates.at(-1).after.headers).toEqual({});
    expect(JSON.stringify(updates)).not.toContain(SECRET);
  });

  it('keeps secret values with their origin: a PATCH moving the url elsewhere gives them again (409 HEADERS_NOT_CARRIED)', async () => {
    const res = await api.post(base, staff.token, {
      url: receiver.url('origin-a'),
      eventTypes: ['*'],
      headers: { 'X-Api-Key': { value: SECRET, secret: true }, 'X-Team': { value: 'ops' } },
    });
    expect(res.status).toBe(201);
    const id: string = res.body.data.id;
    const signing: string = res.body.data.signing_secret;
    await receiver.plan('origin-a2', { secret: signing });
    await receiver.plan('origin-b', { secret: signing });
    // The same receiver by another name: another origin.
    const elsewhere = receiver.url('origin-b').replace('127.0.0.1', 'localhost');
    const patch = (body: unknown) => api.patch(`${base}/${id}`, staff.token, body);

    for (const body of [{ url: elsewhere }, { url: elsewhere, headers: { 'X-Api-Key': { secret: true } } }]) {
      const moved = await patch(body);
      expect([moved.status, moved.body.error?.code, moved.body.error?.details]).toEqual([
        409,
        'HEADERS_NOT_CARRIED',
        { field: 'headers', from_origin: new URL(receiver.url('x')).origin, to_origin: new URL(elsewhere).origin },
      ]);
    }
    expect((await api.get(`${base}/${id}`, staff.token)).body.data.url).toBe(receiver.url('origin-a'));
    const refused = await knex()('audit_events').where({ subject_id: id, outcome: 'refused' }).select('error_code');
    expect(refused.map((r) => r.error_code)).toEqual(['HEADERS_NOT_CARRIED', 'HEADERS_NOT_CARRIED']);

    // Another path at the same origin keeps them.
    expect((await patch({ url: receiver.url('origin-a2') })).status).toBe(200);
    await ping(id);
    expect((await nth('origin-a2', 1)).headers['x-api-key']).toBe(SECRET);

    // Given again with the value, the move goes through and the value goes with it.
    const again = await patch({ url: elsewhere, headers: { 'X-Api-Key': { value: `${SECRET}-b`, secret: true } } });
    expect(again.status).toBe(200);
    await ping(id);
    expect((await nth('origin-b', 1)).headers['x-api-key']).toBe(`${SECRET}-b`);
  });

  const refusal = async (headers: unknown) => {
    const res = await api.post(base, staff.token, { url: receiver.url('never'), eventTypes: ['*'], headers });
    expect([res.status, res.body.error?.code]).toEqual([422, 'VALIDATION_FAILED']);
    return res.body.error.details as { path: string; message: string }[];
  };

  it.each([
    ['Connection', 'hop-by-hop'],
    ['Keep-Alive', 'hop-by-hop'],
    ['Proxy-Authorization', 'hop-by-hop'],
    ['TE', 'hop-by-hop'],
    ['Trailer', 'hop-by-hop'],
    ['Transfer-Encoding', 'hop-by-hop'],
    ['Upgrade', 'hop-by-hop'],
    ['Host', 'Host'],
    ['Content-Type', 'Content-*'],
    ['content-length', 'Content-*'],
    ['X-Service-Signature', 'signature and delivery headers'],
    ['webhook-signature', 'signature and delivery headers'],
    ['Webhook-Id', 'signature and delivery headers'],
    ['User-Agent', 'sets this header itself'],
    ['traceparent', 'sets this header itself'],
    ['Authorization', 'Authorization and Cookie'],
    ['Cookie', 'Authorization and Cookie'],
    ['X Api Key', 'HTTP token'],
    ['X-Ключ', 'HTTP token'],
  ])('refuses the header %s, naming it (%s)', async (name, why) => {
    const details = await refusal({ [name]: { value: 'v' } });
    expect(details).toEqual([
      { in: 'body', path: `headers.${name}`, message: expect.stringContaining(`header ${name}: may not be given`) },
    ]);
    expect(details[0]!.message).toContain(why);
  });

  it('refuses a header named __proto__ at the body parser, before a record could drop it without a word', async () => {
    const res = await api.post(base, staff.token, {
      url: receiver.url('never'),
      eventTypes: ['*'],
      headers: { ['__proto__']: { value: 'v' } },
    });
    expect([res.status, res.body.error?.code]).toEqual([400, 'MALFORMED_REQUEST']);
  });

  it.each([
    ['CR LF', 'a\r\nX-Injected: 1'],
    ['LF', 'a\nb'],
    ['NUL', 'a\u0000b'],
    ['tab', 'a\tb'],
    ['DEL', 'a\u007fb'],
    ['non-ASCII', 'clé'],
    ['leading space', ' a'],
    ['empty', ''],
  ])('refuses a value with %s, naming the header', async (_what, value) => {
    const details = await refusal({ 'X-Team': { value } });
    // NUL is refused by the check every string of the API passes first, at the value's own path.
    expect(details).toEqual([expect.objectContaining({ path: expect.stringMatching(/^headers\.X-Team(\.value)?$/) })]);
  });

  it('refuses more than 20 headers, more than 4096 bytes, and one name given twice', async () => {
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, { value: 'v' }]));
    expect((await refusal(many))[0]!.message).toContain('at most 20 headers');
    const big = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`X-B${i}`, { value: 'v'.repeat(1000) }]));
    expect((await refusal(big))[0]!.message).toMatch(/come to 5020 bytes; at most 4096/);
    expect((await refusal({ 'X-Team': { value: 'a' }, 'x-team': { value: 'b' } }))[0]).toMatchObject({
      path: 'headers.x-team',
      message: expect.stringContaining('given twice'),
    });
    // Nothing was registered by any refusal.
    expect(
      await knex()('webhook_endpoints')
        .where({ url: receiver.url('never') })
        .count({ n: '*' }),
    ).toEqual([{ n: '0' }]);
  });

  it('records an attempt whose secret header values do not open as not sent, and sends nothing', async () => {
    const made = await register('unopened', { 'X-Api-Key': { value: SECRET, secret: true } });
    const other = await register('opened', {});
    const sealed = (await knex()('webhook_endpoints').where({ id: other.id }).first()).secret_ciphertext;
    // A value sealed to another use (this endpoint's signing secret's): it must not open as header values.
    await knex()('webhook_endpoints').where({ id: made.id }).update({ headers_secret_ciphertext: sealed });
    const sent = await ping(made.id);
    const attempt = await until('the attempt recorded', () =>
      knex()('webhook_attempts').where({ delivery_id: sent.delivery_id }).whereNotNull('duration_ms').first(),
    );
    expect(attempt.error).toMatch(/^HEADERS_UNAVAILABLE/);
    expect(attempt.request_headers).toBeNull();
    expect(await receiver.received('unopened')).toEqual([]);
  });
});
