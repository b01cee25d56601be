import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { claimRound, freshScan } from '../../webhooks/dispatch/claim';
import { PATHS } from './support/hooks';
import { anEvent, publish } from './support/publish';

/**
 * Slots taken at the POST (docs/decisions/0309-slots-taken-at-the-post.md): the window of endpoints a
 * dispatch round looks at (WEBHOOK_DISPATCH_ENDPOINTS_PER_ROUND, 4 here) is shared out by
 * organisation, so one organisation with many endpoints never fills it. Seen failing before the
 * change: the first round saw four of X's endpoints (the first four in id order) and not Y's.
 * The rounds are run by hand on the real database, the worker's dispatcher stopped.
 */
describe('a dispatch round’s window of endpoints', () => {
  const set = 'A';
  let svc: TestService;
  let api: ReturnType<typeof http>;
  const base = PATHS[set].endpoints;

  beforeAll(async () => {
    svc = await startService({
      set,
      env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true', WEBHOOK_DISPATCH_ENDPOINTS_PER_ROUND: '4' },
    });
    await svc.stopWorker();
    api = http(svc.baseUrl);
  });
  afterAll(async () => {
    await svc.stop();
  });

  const register = async (who: Actor, n: number): Promise<string> => {
    const res = await api.post(base, who.token, {
      url: `http://127.0.0.1:9/window-${n}`,
      description: `window ${n}`,
      eventTypes: ['subscription.approved'],
    });
    expect(res.status).toBe(201);
    return res.body.data.id;
  };

  it('lets one organisation with 12 endpoints queued take only its part of a round’s window of 4', async () => {
    const x = await actor(svc, newOrg(), ['staff']);
    const y = await actor(svc, newOrg(), ['staff']);
    // Y's endpoint sorts after all of X's twelve: in id order, X's alone would fill every window before it.
    const candidates = [await register(y, 0), await register(y, 1), await register(y, 2)].sort();
    const yEndpoint = candidates.pop()!;
    for (const id of candidates) expect((await api.delete(`${base}/${id}`, y.token)).status).toBe(204);
    const xEndpoints: string[] = [];
    for (let n = 3; xEndpoints.length < 12; n++) {
      const id = await register(x, n);
      if (id < yEndpoint) xEndpoints.push(id);
      else expect((await api.delete(`${base}/${id}`, x.token)).status).toBe(204);
    }
    await publish(svc, [anEvent(x.orgId), anEvent(x.orgId), anEvent(y.orgId)]);

    const knex = svc.orm.em.getConnection().getKnex();
    const scan = freshScan();
    const limits = { budget: 1000, perEndpoint: 256, endpointsPerRound: 4, defaultMaxInFlight: 32 };
    const first = await claimRound(knex, 'window-test', scan, limits);
    const endpointsOf = (r: typeof first) => new Set(r.claimed.map((c) => c.target.endpoint_id));
    expect(endpointsOf(first).has(yEndpoint)).toBe(true);
    expect(endpointsOf(first).size).toBeLessThanOrEqual(4);
    expect(first.cut).toBe(true); // X has more: the next round goes on from there

    // The rounds that follow take the rest of X's endpoints, each once, and then the scan has seen all.
    const seen = new Set([...endpointsOf(first)].filter((id) => id !== yEndpoint));
    let rounds = 1;
    for (let more = first.cut; more && rounds < 10; rounds++) {
      const next = await claimRound(knex, 'window-test', scan, limits);
      for (const id of endpointsOf(next)) {
        expect(seen.has(id)).toBe(false);
        seen.add(id);
      }
      more = next.cut;
    }
    expect([...seen].sort()).toEqual([...xEndpoints].sort());
    expect(rounds).toBeLessThanOrEqual(5);
  });
});
