import { randomUUID } from 'node:crypto';
import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { Receiver } from '../webhooks/support/receiver';
import { PATHS, registerHook } from '../webhooks/support/hooks';
import { loadConfig } from '../../lib/runtime/config';

/** `name;dur=1.23, …` as a map of milliseconds. */
const layersOf = (header: string | null): Map<string, number> =>
  new Map(
    (header ?? '')
      .split(',')
      .map((part) => /^\s*([a-z_]+);dur=([\d.]+)\s*$/.exec(part))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, Number(m[2])]),
  );

/**
 * API_REQUEST_TIMING: the time a request spent in each layer of the API path, in a Server-Timing header, for
 * the client benchmark's slowest 1 % (docs/decisions/0393-client-benchmark-and-request-timing.md).
 */
describe('request timing by layer (API_REQUEST_TIMING)', () => {
  let timed: TestService;
  let plain: TestService;
  let receiver: Receiver;
  beforeAll(async () => {
    [timed, plain, receiver] = await Promise.all([
      startService({ set: 'A', env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true', API_REQUEST_TIMING: 'true' } }),
      startService({ set: 'A', env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } }),
      Receiver.start(),
    ]);
  }, 180_000);
  afterAll(async () => {
    await timed?.stop();
    await plain?.stop();
    await receiver?.stop();
  });

  /** One test ping with an Idempotency-Key to a registered endpoint of a new organisation. */
  async function ping(svc: TestService) {
    const staff = await actor(svc, newOrg(), ['staff']);
    const hook = `timing-${randomUUID()}`;
    const endpoint = await registerHook(svc, receiver, staff, hook, ['*']);
    const res = await http(svc.baseUrl).post(`${PATHS.A.endpoints}/${endpoint.id}/test`, staff.token, undefined, {
      'idempotency-key': randomUUID(),
    });
    await receiver.waitFor(hook, 1);
    return res;
  }

  it('answers each layer of a test ping, and the layers add up to the whole', async () => {
    const res = await ping(timed);
    expect(res.status).toBe(202);
    // The answer is still the JSON envelope, only serialised where it can be timed.
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.data.event_type).toBe('test.ping');
    const layers = layersOf(res.headers.get('server-timing'));
    for (const layer of [
      'rate_limit',
      'auth',
      'liveness',
      'idempotency',
      'route',
      'publish_wait',
      'publish_statement',
      'personal',
      'serialise',
      'other',
      'total',
    ])
      expect([layer, layers.has(layer)]).toEqual([layer, true]);
    // The statement that stores the event and its delivery, and the key's claim and kept answer, take time.
    expect(layers.get('publish_statement')).toBeGreaterThan(0);
    expect(layers.get('idempotency')).toBeGreaterThan(0);
    const parts = [...layers].filter(([k]) => k !== 'total').reduce((sum, [, ms]) => sum + ms, 0);
    // Each value is rounded to a hundredth: eleven of them may differ from the whole by that much each.
    expect(Math.abs(parts - layers.get('total')!)).toBeLessThan(0.1);
  });

  it('adds nothing unless the setting is on', async () => {
    const res = await ping(plain);
    expect(res.status).toBe(202);
    expect(res.headers.get('server-timing')).toBeNull();
  });

  it('is off by default and refused in production', () => {
    const base = { DATABASE_URL: 'postgres://u:p@localhost:5432/db', NODE_ENV: 'development' };
    expect(loadConfig(base).API_REQUEST_TIMING).toBe(false);
    expect(loadConfig({ ...base, API_REQUEST_TIMING: 'true' }).API_REQUEST_TIMING).toBe(true);
    expect(() => loadConfig({ ...base, NODE_ENV: 'production', API_REQUEST_TIMING: 'true' })).toThrow(
      /API_REQUEST_TIMING: tells every caller how long each check took/,
    );
  });
});
