import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { secondInstance } from './support/second-instance';

/**
 * Who a request counts against (issue 10, Access: client addresses). X-Forwarded-For is trusted
 * only when configured, limits are counted in PostgreSQL so every API instance shares them, and
 * processor notifications are not throttled as if they were one investor's writes.
 */
describe('client addresses and shared rate limits', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { WRITE_RATE_LIMIT: '3', WRITE_RATE_WINDOW_SECONDS: '60' } });
  }, 120_000);
  afterAll(() => svc?.stop());

  // Writes with an invented token count against the client address; each test uses its own address.
  const write = (baseUrl: string, headers: Record<string, string> = {}) =>
    http(baseUrl)
      .post('/issuance/offerings', 'not-a-token', { name: 'x', currency: 'USD' }, headers)
      .then((r) => r.status);

  it('ignores X-Forwarded-For by default, so a client cannot invent addresses to escape the write limit', async () => {
    const answers: number[] = [];
    for (let i = 0; i < 5; i++) answers.push(await write(svc.baseUrl, { 'x-forwarded-for': `203.0.113.${i + 1}` }));
    expect(answers).toEqual([401, 401, 401, 429, 429]);
  });

  it('counts one limit across API instances', async () => {
    const other = await secondInstance(svc, { TRUST_PROXY: true, TRUST_PROXY_HOPS: 1 });
    const first = await secondInstance(svc, { TRUST_PROXY: true, TRUST_PROXY_HOPS: 1 });
    try {
      const from = { 'x-forwarded-for': '198.51.100.7' };
      const answers = [
        await write(first.baseUrl, from),
        await write(other.baseUrl, from),
        await write(first.baseUrl, from),
        await write(other.baseUrl, from),
      ];
      expect(answers).toEqual([401, 401, 401, 429]);
    } finally {
      await other.stop();
      await first.stop();
    }
  });

  it('behind a trusted proxy, takes the address the proxy appended, not one the client prepended', async () => {
    const behindProxy = await secondInstance(svc, { TRUST_PROXY: true, TRUST_PROXY_HOPS: 1 });
    try {
      const spoofed: number[] = [];
      for (let i = 0; i < 4; i++)
        spoofed.push(await write(behindProxy.baseUrl, { 'x-forwarded-for': `10.9.9.${i}, 198.51.100.20` }));
      expect(spoofed).toEqual([401, 401, 401, 429]);
      // Another real client behind the same proxy has a budget of its own.
      expect(await write(behindProxy.baseUrl, { 'x-forwarded-for': '198.51.100.21' })).toBe(401);
    } finally {
      await behindProxy.stop();
    }
  });

  it('does not count processor notifications against the write limit of the address they come from', async () => {
    const viaProxy = await secondInstance(svc, { TRUST_PROXY: true, TRUST_PROXY_HOPS: 1 });
    try {
      const answers: number[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await http(viaProxy.baseUrl).post(
          '/payments/sandbox/notifications',
          undefined,
          { id: `evt_${i}`, type: 'x', data: {} },
          { 'x-forwarded-for': '192.0.2.50' },
        );
        answers.push(res.status);
      }
      // Unsigned, so each is refused on its signature; none is refused for rate.
      expect(answers).toEqual([400, 400, 400, 400, 400, 400]);
    } finally {
      await viaProxy.stop();
    }
  });
});
