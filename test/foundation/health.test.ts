import { http } from '../support/http';
import { startService, type TestService } from '../support/service';

describe('health', () => {
  let svc: TestService;
  beforeAll(async () => (svc = await startService({ set: 'A' })));
  afterAll(() => svc.stop());

  it('answers /health while the process is alive', async () => {
    const res = await http(svc.baseUrl).get('/health');
    expect(res).toMatchObject({ status: 200, body: { success: true, data: { status: 'ok' } } });
  });

  it('answers /ready once PostgreSQL and Temporal are reachable', async () => {
    const res = await http(svc.baseUrl).get('/ready');
    expect(res).toMatchObject({ status: 200, body: { success: true, data: { database: 'ok', temporal: 'ok' } } });
  });

  it('answers an unknown route with 404 in the error envelope', async () => {
    const res = await http(svc.baseUrl).get('/nope');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('ROUTE_NOT_FOUND');
  });
});
