import { admission, CLOSED, countsAsOutage, observe, type Circuit } from '../../domain/circuit-breaker';
import { pace, PACING_HORIZON_MS, spacingMs } from '../../domain/delivery-pacing';
import { allot, fairShares, sharesOverHeld, type Candidate } from '../../webhooks/dispatch/allotment';
import { deliveryIdFor } from './support/delivery-id';

/** The delivery engine's pure rules: the circuit breaker, the rate limit's pacing, a round's shares. */
describe('circuit breaker rules', () => {
  const rules = { failures: 3, cooldownMs: 30_000, maxCooldownMs: 120_000 };
  const t0 = new Date('2026-11-24T12:00:00Z');
  const at = (ms: number) => new Date(t0.getTime() + ms);

  it.each([
    [null, true],
    [500, true],
    [503, true],
    [408, true],
    [429, true],
    [200, false],
    [400, false],
    [404, false],
    [410, false],
  ])('counts status %s as an outage: %s', (status, outage) => {
    expect(countsAsOutage(status)).toBe(outage);
  });

  it('counts an answer that took most of the 30 s as an outage, a 2xx included', () => {
    expect([countsAsOutage(200, 19_999), countsAsOutage(200, 20_000), countsAsOutage(404, 29_000)]).toEqual([
      false,
      true,
      true,
    ]);
  });

  it('opens after the configured failures in a row, and a success in between starts the count again', () => {
    expect(observe(CLOSED, [false, false], t0, rules)).toMatchObject({ state: 'closed', consecutiveFailures: 2 });
    expect(observe(CLOSED, [false, false, true, false, false], t0, rules)).toMatchObject({
      state: 'closed',
      consecutiveFailures: 2,
    });
    expect(observe(CLOSED, [false, false, false], t0, rules)).toEqual({
      state: 'open',
      consecutiveFailures: 3,
      openCount: 1,
      openedAt: t0,
      probeAt: at(30_000),
    });
  });

  it('holds everything while open, lets one probe through after the cool-down, and reopens twice as long when it fails', () => {
    const open = observe(CLOSED, [false, false, false], t0, rules);
    expect(admission(open, at(29_999))).toBe('hold');
    expect(admission(open, at(30_000))).toBe('probe');
    const halfOpen: Circuit = { ...open, state: 'half_open', probeAt: at(90_000) };
    expect(admission(halfOpen, at(60_000))).toBe('hold');
    expect(admission(halfOpen, at(90_000))).toBe('probe'); // the probe was lost with its worker
    expect(observe(halfOpen, [false], at(40_000), rules)).toMatchObject({ state: 'open', probeAt: at(100_000) });
    const third = observe({ ...halfOpen, openCount: 3 }, [false], at(40_000), rules);
    expect(third.probeAt).toEqual(at(40_000 + 120_000)); // capped
    expect(observe(halfOpen, [true], at(40_000), rules)).toEqual(CLOSED);
    expect(admission(CLOSED, t0)).toBe('send');
  });
});

describe('rate limit pacing', () => {
  it('spaces deliveries 2% over 1/N, so no second holds more than N', () => {
    expect(spacingMs(5)).toBeCloseTo(204);
    expect(spacingMs(1000)).toBeCloseTo(1.02);
    const n = 50;
    const starts = Array.from({ length: 200 }, (_, i) => i * spacingMs(n));
    for (const s of starts) expect(starts.filter((t) => t >= s && t < s + 1000).length).toBeLessThanOrEqual(n);
  });

  it('reserves what starts within the horizon, and says how long until the next start otherwise', () => {
    expect(pace(0, 5)).toEqual({ count: 2, waitMs: 0 }); // 0 and 204 ms
    expect(pace(100, 5)).toEqual({ count: 1, waitMs: 100 });
    expect(pace(PACING_HORIZON_MS + 40, 5)).toEqual({ count: 0, waitMs: 40 });
    expect(pace(0, 1000).count).toBe(Math.floor(PACING_HORIZON_MS / 1.02) + 1);
  });
});

describe('a dispatch round’s shares', () => {
  const endpoint = (id: string, orgId: string, more: Partial<Candidate> = {}): Candidate => ({
    endpointId: id,
    orgId,
    live: true,
    admission: 'send',
    free: 32,
    rate: null,
    ...more,
  });
  const takes = (grants: ReturnType<typeof allot>) =>
    Object.fromEntries(grants.map((g) => [g.endpointId, [g.mode, g.take]]));

  it('divides free slots max-min fairly: no one gets more while someone who wants more gets less', () => {
    expect(
      Object.fromEntries(
        fairShares(
          new Map([
            ['a', 10],
            ['b', 100],
            ['c', 100],
          ]),
          90,
        ),
      ),
    ).toEqual({ a: 10, b: 40, c: 40 });
    expect(
      Object.fromEntries(
        fairShares(
          new Map([
            ['a', 1],
            ['b', 2],
          ]),
          100,
        ),
      ),
    ).toEqual({ a: 1, b: 2 });
  });

  it('shares first by organisation, then by endpoint: a burst with many endpoints takes one organisation’s share', () => {
    const many = Array.from({ length: 10 }, (_, i) => endpoint(`x${i}`, 'X'));
    const grants = allot([...many, endpoint('y', 'Y')], { budget: 40, perEndpoint: 256 });
    const t = takes(grants);
    expect(t.y).toEqual(['send', 20]);
    expect(many.reduce((n, e) => n + (t[e.endpointId]?.[1] as number), 0)).toBe(20);
  });

  it('is fair over the slots organisations already hold, and keeps the last few for one that holds fewer', () => {
    const demands = (o: Record<string, number>) => new Map(Object.entries(o));
    // X holds 30 already: Y, holding none, catches up first.
    expect(Object.fromEntries(sharesOverHeld(demands({ x: 100, y: 5 }), demands({ x: 30 }), 10, 2))).toEqual({
      x: 3,
      y: 5,
    });
    expect(Object.fromEntries(sharesOverHeld(demands({ x: 100, y: 100 }), demands({ x: 30 }), 40, 0))).toEqual({
      x: 5,
      y: 35,
    });
    // The last 5 slots of 100: X, holding 95, gets none of them; Y, holding none, gets what it wants.
    expect(Object.fromEntries(sharesOverHeld(demands({ x: 100 }), demands({ x: 95 }), 5, 5))).toEqual({ x: 0 });
    expect(Object.fromEntries(sharesOverHeld(demands({ x: 100, y: 1 }), demands({ x: 95 }), 5, 5))).toEqual({
      x: 0,
      y: 1,
    });
    const grants = allot([endpoint('x1', 'X'), endpoint('y1', 'Y', { free: 1 })], {
      budget: 4,
      perEndpoint: 256,
      held: demands({ X: 900 }),
      reserve: 50,
    });
    expect(takes(grants)).toEqual({ y1: ['send', 1] });
  });

  it('grants a rate-limited endpoint no more than may be open at once under its pacing', () => {
    const grants = allot(
      [
        endpoint('busy', 'A', { rate: { perSecond: 1, waitMs: 0, startable: 0 } }),
        endpoint('idle', 'A', { rate: { perSecond: 1, waitMs: 0, startable: 1 } }),
        endpoint('waiting', 'B', { rate: { perSecond: 1, waitMs: Infinity, startable: 0 } }),
        endpoint('two', 'C', { rate: { perSecond: 20, waitMs: 0, startable: 2 } }),
      ],
      { budget: 1000, perEndpoint: 256 },
    );
    expect(takes(grants)).toEqual({ idle: ['send', 1], two: ['send', 2] });
  });

  it('holds an endpoint to its free slots and its pacing, probes an open circuit once, defers a held one, drops a dead one', () => {
    const grants = allot(
      [
        endpoint('busy', 'A', { free: 0 }),
        endpoint('some', 'A', { free: 3 }),
        endpoint('paced', 'B', { rate: { perSecond: 5, waitMs: 0 } }),
        endpoint('later', 'B', { rate: { perSecond: 5, waitMs: 400 } }),
        endpoint('probe', 'C', { admission: 'probe' }),
        endpoint('held', 'C', { admission: 'hold' }),
        endpoint('gone', 'D', { live: false }),
      ],
      { budget: 1000, perEndpoint: 256 },
    );
    expect(takes(grants)).toEqual({
      some: ['send', 3],
      paced: ['send', 2],
      probe: ['probe', 1],
      held: ['defer', 256],
      gone: ['drop', 256],
    });
    expect(grants.find((g) => g.endpointId === 'paced')).toMatchObject({ startMs: 0, spacingMs: 204 });
  });
});

describe('delivery ids', () => {
  it('are a v8 UUID over SHA-256, the same for the same pair (deliveries.test checks it against the SQL one)', () => {
    const id = deliveryIdFor('6f9619ff-8b86-4d01-b42d-00cf4fc964ff', '0b0e5c4c-2f1a-4b8e-9a0c-1d2e3f405162');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deliveryIdFor('6f9619ff-8b86-4d01-b42d-00cf4fc964ff', '0b0e5c4c-2f1a-4b8e-9a0c-1d2e3f405162')).toBe(id);
  });
});
