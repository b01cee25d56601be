import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { silentNameserver, type Nameserver } from '../security/support/nameservers';
import { until } from '../support/wait';

/**
 * A nameserver that never answers costs the registering requests their wait, nothing more: the
 * lookup runs before the transaction, on the process's own resolver (docs/decisions/0274-dns-off-the-shared-path.md).
 */
describe('registering endpoints whose nameserver never answers', () => {
  let svc: TestService;
  let silent: Nameserver;
  beforeAll(async () => {
    silent = await silentNameserver();
    // The pool is the default 10, as many as the registrations below. Each lookup waits 2 x 3 s: long enough that
    // the other organisation's requests have their turn on a loaded host (at 2 x 1 s, CI's host once let a
    // registration's lookup give up before they were answered).
    svc = await startService({
      set: 'A',
      env: { DNS_SERVERS: silent.address, DNS_TIMEOUT_MS: '3000', DNS_TRIES: '2' },
    });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await silent?.stop();
  });

  it("accepts them, and another organisation's requests complete while they wait", async () => {
    const api = http(svc.baseUrl);
    const waiting = await actor(svc, newOrg(), ['staff']);
    const other = await actor(svc, newOrg(), ['staff']);
    let settled = 0;
    const registrations = Array.from({ length: 10 }, (_, i) =>
      api
        .post('/notifications/webhook-endpoints', waiting.token, {
          url: `https://hooks-${i}.never-answers.example/events`,
          eventTypes: ['*'],
        })
        .finally(() => settled++),
    );
    // Every registration is now waiting on the nameserver.
    await until('the ten lookups to be asked', async () => (silent.queries >= 10 ? true : undefined));

    const [registered, listed, offering] = await Promise.all([
      api.post('/notifications/webhook-endpoints', other.token, {
        url: 'https://93.184.215.14/hook',
        eventTypes: ['*'],
      }),
      api.get('/notifications/webhook-endpoints', other.token),
      api.post('/issuance/offerings', other.token, { name: 'Seed', currency: 'USD' }),
    ]);
    expect([registered.status, listed.status, offering.status]).toEqual([201, 200, 201]);
    expect(settled).toBe(0);

    // A name that does not resolve yet is accepted as given: the integrator's DNS may not be live.
    const answers = await Promise.all(registrations);
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(201));
    const stored = await api.get(`/notifications/webhook-endpoints/${answers[0]!.body.data.id}`, waiting.token);
    expect(stored.body.data.url).toBe('https://hooks-0.never-answers.example/events');
  });
});
