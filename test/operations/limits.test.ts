import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';

/** Request body size and per-client write limits answer in the one error envelope (spec §4, issue 7). */
describe('request limits', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({
      set: 'A',
      env: { BODY_LIMIT_KB: '2', WRITE_RATE_LIMIT: '3', WRITE_RATE_WINDOW_SECONDS: '60' },
    });
  }, 120_000);
  afterAll(() => svc?.stop());

  it('answers a body over BODY_LIMIT_KB with 413 PAYLOAD_TOO_LARGE in the envelope', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const res = await http(svc.baseUrl).post('/issuance/offerings', staff.token, {
      name: 'x'.repeat(3 * 1024),
      currency: 'USD',
    });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      success: false,
      error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String), details: null },
    });
  });

  it('accepts a body under the limit', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const res = await http(svc.baseUrl).post('/issuance/offerings', staff.token, {
      name: 'y'.repeat(200),
      currency: 'USD',
    });
    expect(res.status).toBe(201);
  });

  it('answers the writes of one token subject past the limit with 429 and Retry-After, and counts others apart', async () => {
    const api = http(svc.baseUrl);
    const staff = await actor(svc, newOrg(), ['staff']);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await api.post('/issuance/offerings', staff.token, { name: `o${i}`, currency: 'USD' })).status);
    expect(statuses).toEqual([201, 201, 201]);
    const over = await api.post('/issuance/offerings', staff.token, { name: 'o4', currency: 'USD' });
    expect(over.status).toBe(429);
    expect(over.body).toEqual({
      success: false,
      error: {
        code: 'RATE_LIMITED',
        message: expect.any(String),
        details: { retry_after_seconds: expect.any(Number) },
      },
    });
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(over.body.error.details.retry_after_seconds).toBe(retryAfter);
    // Reads are not writes, and another subject has a budget of its own.
    expect((await api.get('/issuance/offerings', staff.token)).status).toBe(200);
    const other = await actor(svc, newOrg(), ['staff']);
    expect((await api.post('/issuance/offerings', other.token, { name: 'p', currency: 'USD' })).status).toBe(201);
  });

  it('counts concurrent writes of one subject each in its own place: exactly the limit passes, the rest are refused', async () => {
    // Hits that arrive together are counted by one upsert (db/rate-limits.ts).
    const api = http(svc.baseUrl);
    const staff = await actor(svc, newOrg(), ['staff']);
    const statuses = await Promise.all(
      Array.from(
        { length: 10 },
        async (_, i) => (await api.post('/issuance/offerings', staff.token, { name: `c${i}`, currency: 'USD' })).status,
      ),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
  });

  it('counts writes without a valid token per client address, so an invented token buys no new budget', async () => {
    const api = http(svc.baseUrl);
    // This test's address may already have spent some budget on invented tokens in other tests; spend the rest.
    const answers: number[] = [];
    for (let i = 0; i < 5; i++)
      answers.push((await api.post('/issuance/offerings', `not-a-token-${i}`, { name: 'z', currency: 'USD' })).status);
    expect(answers.slice(0, 3)).toEqual([401, 401, 401]);
    expect(answers.slice(3)).toEqual([429, 429]);
  });
});
