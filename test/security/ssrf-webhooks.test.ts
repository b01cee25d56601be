import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';

/** The SSRF guard on the webhook API: where a URL really points decides, not how it is spelled. */
describe('webhook URLs that point inside the network', () => {
  let svc: TestService;
  beforeAll(async () => (svc = await startService({ set: 'A' })));
  afterAll(() => svc.stop());

  it.each([
    ['loopback by name', 'https://localhost:8443/hook'],
    ['loopback by address', 'https://127.0.0.1/hook'],
    ['a private network', 'https://10.1.2.3/hook'],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data'],
    ['IPv6 loopback', 'https://[::1]/hook'],
  ])('refuses %s at registration with 400 WEBHOOK_URL_FORBIDDEN', async (_what, url) => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const res = await http(svc.baseUrl).post('/notifications/webhook-endpoints', staff.token, {
      url,
      description: 'x',
      eventTypes: ['*'],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('WEBHOOK_URL_FORBIDDEN');
  });

  it('refuses the same on PATCH', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const res = await http(svc.baseUrl).patch(
      '/notifications/webhook-endpoints/3b0c4a7e-8d2b-4a6f-9a51-1f2e3d4c5b6a',
      staff.token,
      { url: 'https://192.168.0.10/hook' },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('WEBHOOK_URL_FORBIDDEN');
  });
});
