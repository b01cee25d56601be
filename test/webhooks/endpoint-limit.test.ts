import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { PATHS } from './support/hooks';

/** An organisation's endpoints are capped (docs/decisions/0294-endpoints-per-organisation.md). */
describe('endpoints per organisation', () => {
  const set = 'A';
  let svc: TestService;
  let api: ReturnType<typeof http>;
  const base = PATHS[set].endpoints;

  beforeAll(async () => {
    svc = await startService({
      set,
      env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true', WEBHOOK_MAX_ENDPOINTS_PER_ORG: '2' },
    });
    api = http(svc.baseUrl);
  });
  afterAll(async () => {
    await svc.stop();
  });

  const register = (token: string, n: number) =>
    api.post(base, token, { url: `http://127.0.0.1:9/hook-${n}`, description: `hook ${n}`, eventTypes: ['*'] });

  it('refuses one endpoint over the limit with 409 ENDPOINT_LIMIT_REACHED, per organisation, until one is deleted', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const first = await register(staff.token, 1);
    expect((await register(staff.token, 2)).status).toBe(201);
    // Seen failing before the change: the third was registered (201).
    const over = await register(staff.token, 3);
    expect([over.status, over.body.error.code, over.body.error.details]).toEqual([
      409,
      'ENDPOINT_LIMIT_REACHED',
      { limit: 2 },
    ]);
    // Two at once cannot both take a freed place.
    const other = await actor(svc, newOrg(), ['staff']);
    const both = await Promise.all([register(other.token, 1), register(other.token, 2), register(other.token, 3)]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 201, 409]);
    expect((await api.delete(`${base}/${first.body.data.id}`, staff.token)).status).toBe(204);
    expect((await register(staff.token, 4)).status).toBe(201);
  });
});
