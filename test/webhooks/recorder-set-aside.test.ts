import { randomUUID } from 'node:crypto';
import type { Config } from '../../lib/runtime/config';
import type { Orm } from '../../db/orm';
import { registry } from '../../lib/runtime/metrics';
import { endpointStore, secretBoxFrom } from '../../webhooks';
import { claimAttempts, type Finished } from '../../webhooks/deliveries/attempt-store';
import { createRecorder } from '../../webhooks/attempts/result-recorder';
import { anEvent, publishUnqueued } from './support/publish';
import { webhookHarness } from './support/webhook-harness';

/**
 * One result the database refuses must not hold up the others (docs/decisions/0292-a-bad-result-is-set-aside.md):
 * the recorder, on a real PostgreSQL, halves a refused batch until the bad result stands alone,
 * records every other one, and sets the bad one aside (logged, counted, retried alone).
 */
describe('the recorder sets a result it cannot record aside', () => {
  let config: Config;
  let orm: Orm;
  const knex = () => orm.em.getConnection().getKnex();

  beforeAll(async () => {
    ({ config, orm } = await webhookHarness());
  });
  afterAll(async () => {
    await orm.close(true);
  });

  const setAside = async () => {
    const counter = registry.getSingleMetric('tranche_webhook_results_set_aside_total');
    return counter ? ((await counter.get()).values[0]?.value ?? 0) : 0;
  };

  it.each([
    ['successes', 200],
    ['failures', 500],
  ])('records the other %s of a batch while one bad result is retried alone', async (_, status) => {
    const orgId = randomUUID();
    const { row: endpoint } = await endpointStore(orm, secretBoxFrom(config)).create(orgId, {
      url: 'http://127.0.0.1:9/hook',
      description: 'set aside',
      eventTypes: ['*'],
    });
    const events = Array.from({ length: 40 }, () => anEvent(orgId));
    const { deliveries } = await publishUnqueued(
      { orm, config },
      events,
      events.map((e) => ({ eventId: e.id, endpointId: endpoint.id })),
    );
    const owner = `test:${randomUUID()}`;
    const attemptedAt = new Date().toISOString();
    const inputs = deliveries.map((d) => ({
      deliveryId: d.deliveryId,
      number: 1,
      attemptedAt,
      nextDelayMs: 30_000,
      owner,
    }));
    await claimAttempts(knex(), inputs);
    const recorder = createRecorder({
      knex,
      set: config.BEHAVIOUR_SET,
      failingPeriodMs: 86_400_000,
      failingAfterAttempts: 5,
      circuit: { failures: 1000, cooldownMs: 30_000, maxCooldownMs: 480_000 },
    });
    const result = (input: (typeof inputs)[number]): Finished => ({
      input,
      durationMs: 5,
      responseStatus: status,
      responseBody: 'ok',
      error: null,
      retryAfterMs: null,
      requestHeaders: {},
    });
    // The bad one: a start the database cannot read as a time, so any statement holding it fails.
    const bad = inputs[17]!;
    const before = await setAside();
    const recorded = inputs.map((i) =>
      recorder.record(result(i === bad ? { ...i, attemptedAt: 'not a time' } : i), { endpointId: endpoint.id }),
    );

    // Seen failing before the fix: the whole batch was retried as one, forever, and none was recorded.
    await Promise.all(recorded.filter((_recorded, i) => inputs[i] !== bad));
    const rows: { id: string; status: string }[] = await knex()('webhook_deliveries')
      .where({ endpoint_id: endpoint.id })
      .select('id', 'status');
    const want = status === 200 ? 'success' : 'failed';
    expect(
      rows
        .filter((r) => r.status === want)
        .map((r) => r.id)
        .sort(),
    ).toEqual(
      inputs
        .filter((i) => i !== bad)
        .map((i) => i.deliveryId)
        .sort(),
    );
    expect(rows.find((r) => r.id === bad.deliveryId)!.status).toBe('pending');
    expect(await setAside()).toBe(before + 1);
    // Still waiting for its own record, not given up on: the recorder keeps it for a replay to find.
    expect(recorder.pending(owner, bad.deliveryId, 1)).toBeDefined();
  });
});
