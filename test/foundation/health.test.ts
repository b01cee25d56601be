import { dependencyWatchOf } from '../../api/dependency-watch';
import { actor, newOrg } from '../support/fixtures';
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

  // CI (run of 2026-11-27): a loaded machine stopped this process past the probes' 2 s, and the API
  // answered 503 "PostgreSQL and Temporal cannot be reached" while both were answering.
  it("does not take this process's own stall for an outage", async () => {
    const watch = dependencyWatchOf(svc);
    const look = watch.check();
    const until = Date.now() + 2600;
    while (Date.now() < until); // the event loop stopped, as by a long GC pause or a starved CPU
    expect(await look).toEqual({ database: true, temporal: true });
    const staff = await actor(svc, newOrg(), ['staff']);
    expect((await http(svc.baseUrl).get('/notifications/webhook-endpoints', staff.token)).status).toBe(200);
  });

  it('answers an unknown route with 404 in the error envelope', async () => {
    const res = await http(svc.baseUrl).get('/nope');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('ROUTE_NOT_FOUND');
  });

  // Each router is entered only by paths under its prefix (server/app.ts): what its routes match,
  // and what it says of a wrong method, stay as they were.
  it('matches paths in any case and answers a method a path lacks with 405 in the error envelope', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const api = http(svc.baseUrl);
    expect((await api.get('/NOTIFICATIONS/Webhook-Endpoints', staff.token)).status).toBe(200);

    const wrong = await api.delete('/notifications/webhook-endpoints', staff.token);
    expect(wrong.status).toBe(405);
    expect(wrong.body.error.code).toBe('METHOD_NOT_ALLOWED');
    const unknown = await api.call('PROPFIND', '/issuance/offerings', { token: staff.token });
    expect(unknown.status).toBe(405);
    expect(unknown.body.error.code).toBe('METHOD_NOT_ALLOWED');

    const options = await api.call('OPTIONS', '/notifications/webhook-endpoints');
    expect(options.status).toBe(200);
    expect(options.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'POST']);
    expect((await api.get('/notifications/nope', staff.token)).body.error.code).toBe('ROUTE_NOT_FOUND');
  });
});
