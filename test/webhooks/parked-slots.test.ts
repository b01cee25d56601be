import { actor, newOrg } from '../support/fixtures';
import type { http } from '../support/http';
import type { TestService } from '../support/service';
import { PATHS, registerHook } from './support/hooks';
import { anEvent, publish } from './support/publish';
import type { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';

/**
 * Slots taken at the POST (docs/decisions/0309-slots-taken-at-the-post.md): organisation X's endpoints
 * at maxInFlight 256 and 1 delivery a second, answering 200 only after a long wait, with about
 * 2,100 deliveries queued to them, never take the worker's slots from organisation Y, whose test
 * pings keep a p99 under 100 ms. Before the fix each of X's deliveries took a slot while it
 * waited for its pace, a round granted one more per endpoint every second, and the worker's
 * in-flight limit filled with parked deliveries: Y's pings waited for one of X's POSTs to end.
 *
 * CI runs it scaled (the worker's in-flight limit 24 instead of 1,000, answers after 6 s instead
 * of 29 s, pings for 30 s instead of 2 minutes: on the old code the limit fills in about 3 s
 * rather than 2 minutes). TRANCHE_PARKED_FULL=1 runs the issue's full figures. The pings' p99
 * must stay under 100 ms, or, on a machine loaded by other work, under twice the p99 of the same
 * pings measured just before X's backlog (seen before the fix, scaled: p50 2,917 ms, p99 6,091 ms).
 */
const FULL = process.env.TRANCHE_PARKED_FULL === '1';
const SCALE = FULL
  ? { maxInFlight: 1000, answerMs: 29_000, pingSeconds: 120 }
  : { maxInFlight: 24, answerMs: 6_000, pingSeconds: 30 };
const ENDPOINTS = 8;
const DELIVERIES = 2100;

describe('a tenant’s parked deliveries never hold the worker’s slots', () => {
  const set = 'A';
  let svc: TestService;
  let receiver: Receiver;
  let api: ReturnType<typeof http>;
  const base = PATHS[set].endpoints;

  beforeAll(async () => {
    ({ svc, receiver, api } = await startWebhookStack(set, {
      WEBHOOK_DISPATCH_MAX_IN_FLIGHT: String(SCALE.maxInFlight),
    }));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }), 60_000);

  it(
    'keeps another organisation’s test pings under 100 ms p99 while one organisation has 2,100 deliveries waiting on slow rate-limited endpoints',
    async () => {
      const x = await actor(svc, newOrg(), ['staff']);
      const y = await actor(svc, newOrg(), ['staff']);
      const slow: string[] = [];
      for (let i = 0; i < ENDPOINTS; i++) {
        const hook = `parked-x-${i}`;
        const { id } = await registerHook(svc, receiver, x, hook, ['subscription.approved'], {
          delayMs: SCALE.answerMs,
        });
        const set = await api.patch(`${base}/${id}`, x.token, { maxInFlight: 256, rateLimitPerSecond: 1 });
        expect([set.body.data?.max_in_flight, set.body.data?.rate_limit_per_second]).toEqual([256, 1]);
        slow.push(hook);
      }
      const quiet = await registerHook(svc, receiver, y, 'parked-y', ['test.ping']);
      /** Y's test pings at 5 a second for `seconds`, each timed from its request to its arrival. */
      const pings = async (seconds: number) => {
        const sent = new Map<string, number>();
        const answered: Promise<void>[] = [];
        const until = Date.now() + seconds * 1000;
        for (let at = Date.now(); at < until; at += 200) {
          await new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));
          const t0 = Date.now();
          answered.push(
            api.post(`${base}/${quiet.id}/test`, y.token).then((res) => {
              expect(res.status).toBe(202);
              sent.set(res.body.data.delivery_id, t0);
            }),
          );
        }
        await Promise.all(answered);
        const got = (await receiver.waitFor('parked-y', received + sent.size, 60_000)).filter((d) =>
          sent.has(d.headers['x-service-delivery-id']!),
        );
        received += sent.size;
        expect(got).toHaveLength(sent.size);
        const ms = got.map((d) => d.at - sent.get(d.headers['x-service-delivery-id']!)!).sort((a, b) => a - b);
        const at = (q: number) => ms[Math.ceil(ms.length * q) - 1]!;
        return { n: ms.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) };
      };
      let received = 0;
      const baseline = await pings(10);

      await publish(
        svc,
        Array.from({ length: Math.ceil(DELIVERIES / ENDPOINTS) }, () => anEvent(x.orgId)),
      );
      // Three of X's rounds have sent (one POST a second per endpoint): before the fix, by then enough
      // of its deliveries parked to fill the worker (8 endpoints x 3 = the scaled limit of 24).
      for (const hook of slow) await receiver.waitFor(hook, 3, 15_000);

      const during = await pings(SCALE.pingSeconds);
      console.log({ parked_neighbour: { baseline, during } });
      // Under 100 ms; on a machine loaded by other work, no worse than twice the same pings' p99 without X's backlog.
      expect(during.p99).toBeLessThan(Math.max(100, 2 * baseline.p99));

      // X is still served, within its own limits: at most one a second and one open request per endpoint.
      for (const hook of slow) {
        const arrived = await receiver.received(hook);
        expect(arrived.length).toBeGreaterThanOrEqual(1);
        expect(Math.max(...arrived.map((d) => d.concurrent))).toBe(1);
      }
      // What waits for X is queued, not held in the worker: it holds few slots and claims nothing far ahead.
      const knex = svc.orm.em.getConnection().getKnex();
      const [open] = await knex('webhook_attempts as a')
        .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
        .where('d.org_id', x.orgId)
        .whereNull('a.duration_ms')
        .count<{ n: string }[]>('* as n');
      expect(Number(open!.n)).toBeLessThanOrEqual(2 * ENDPOINTS);
    },
    (SCALE.pingSeconds + 120) * 1000,
  );
});
