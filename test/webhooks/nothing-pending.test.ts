import { actor, newOrg, type Actor } from '../support/fixtures';
import type { http } from '../support/http';
import type { TestService } from '../support/service';
import { deliveryWorkflowId } from '../../domain/webhook-messages';
import { PATHS, registerHook } from './support/hooks';
import { Receiver } from './support/receiver';
import { until } from '../support/wait';
import { deliveryDetail, startWebhookStack, stopWebhookStack, testPing } from './support/stack';

/**
 * No delivery is left `pending` forever (docs/decisions/0290-nothing-left-pending.md): deliveries
 * queued for an endpoint that is then disabled or deleted end `failed` with an attempt that says
 * why, a recovery sends them once the endpoint is enabled again, and a deleted endpoint's waiting
 * deliveries are stopped by the workers, not by the DELETE request.
 */
describe('nothing is left pending', () => {
  const set = 'A';
  let svc: TestService;
  let receiver: Receiver;
  let api: ReturnType<typeof http>;
  const base = PATHS[set].endpoints;

  beforeAll(async () => {
    ({ svc, receiver, api } = await startWebhookStack(set, { WEBHOOK_SWEEP_INTERVAL_MS: '300' }));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  const ping = (who: Actor, endpointId: string) => testPing(api, who, endpointId, set);
  const detail = async (who: Actor, id: string) =>
    (await deliveryDetail(api, who, id, set)) as {
      status: string;
      next_attempt_at: string | null;
      attempts: { error: string | null; response_status: number | null }[];
    };
  const settled = (who: Actor, ids: string[], timeoutMs = 30_000) =>
    until(
      'no delivery pending',
      async () => {
        const all = await Promise.all(ids.map((id) => detail(who, id)));
        return all.every((d) => d.status !== 'pending') ? all : undefined;
      },
      { timeoutMs: timeoutMs },
    );

  it('ends deliveries queued behind a rate limit failed with the reason when the endpoint is disabled, and a recovery sends them once re-enabled', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const hook = await registerHook(svc, receiver, staff, 'pending-disable', ['*']);
    expect((await api.patch(`${base}/${hook.id}`, staff.token, { rateLimitPerSecond: 1 })).status).toBe(200);
    const since = new Date(Date.now() - 60_000).toISOString();
    // All ten queued at once, so the 1/s limit holds most of them back however slow the machine is;
    // disabled as soon as the first has arrived.
    const ids = await Promise.all(Array.from({ length: 10 }, () => ping(staff, hook.id)));
    await receiver.waitFor('pending-disable', 1);
    expect((await api.patch(`${base}/${hook.id}`, staff.token, { status: 'disabled' })).status).toBe(200);
    expect((await api.patch(`${base}/${hook.id}`, staff.token, { status: 'enabled' })).status).toBe(200);

    // Seen failing before the fix: 9 of the 10 stayed `pending` with nothing left to send them.
    // In `workflow` shape each waits its turn at 1/s on a timer stretched by the endpoint's backlog
    // (decision 0299): 17 s alone, over 30 s beside the other suites on two cores.
    const after = await settled(staff, ids, 90_000);
    const failed = after.filter((d) => d.status !== 'success');
    // Engine shape: the queued ones end failed at the disable (the rate limit held most of them back).
    // Workflow shape: each is already a workflow waiting its turn, which finds the endpoint enabled
    // again and delivers: nothing is left pending either way (docs/decisions/0290-nothing-left-pending.md).
    if (svc.config.WEBHOOK_DELIVERY_SHAPE === 'engine') expect(failed.length).toBeGreaterThan(0);
    for (const d of failed) {
      expect(d.status).toBe('failed');
      expect(d.next_attempt_at).toBeNull();
      expect(d.attempts.at(-1)!.error).toMatch(/^ENDPOINT_DISABLED: not sent/);
    }

    // Recoverable: a bulk recovery of the endpoint sends every one of them.
    const rec = await api.post(`${base}/${hook.id}/recoveries`, staff.token, { since });
    expect(rec.status).toBe(202);
    await until(
      'every delivery recovered',
      async () => {
        const all = await Promise.all(ids.map((id) => detail(staff, id)));
        return all.every((d) => d.status === 'success') ? all : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect((await receiver.waitFor('pending-disable', 10)).length).toBeGreaterThanOrEqual(10);
  }, 180_000);

  it("stops a deleted endpoint's queued and scheduled deliveries in the background: none left pending or waiting", async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    // Two deliveries fail their first attempt and wait 30 s for the second; eight wait behind a rate limit of 1/s.
    const hook = await registerHook(svc, receiver, staff, 'pending-delete', ['*'], { defaultStatus: 500 });
    const scheduled = [await ping(staff, hook.id), await ping(staff, hook.id)];
    await until(
      'the failed deliveries scheduled',
      async () =>
        (await Promise.all(scheduled.map((id) => detail(staff, id)))).every((d) => d.next_attempt_at)
          ? true
          : undefined,
      { timeoutMs: 20_000 },
    );
    expect((await api.patch(`${base}/${hook.id}`, staff.token, { rateLimitPerSecond: 1 })).status).toBe(200);
    const queued: string[] = [];
    for (let i = 0; i < 8; i++) queued.push(await ping(staff, hook.id));
    expect((await api.delete(`${base}/${hook.id}`, staff.token)).status).toBe(204);

    const knex = svc.orm.em.getConnection().getKnex();
    // Seen failing before the fix: the queued ones stayed `pending` for good.
    await until('no delivery pending or waiting', async () => {
      const rows: { status: string; next_attempt_at: Date | null }[] = await knex('webhook_deliveries')
        .whereIn('id', [...scheduled, ...queued])
        .select('status', 'next_attempt_at');
      return rows.every((r) => r.status !== 'pending' && r.next_attempt_at === null) ? rows : undefined;
    });
    const reasons: { error: string | null }[] = await knex('webhook_attempts')
      .whereIn('delivery_id', queued)
      .where({ owner: 'engine:not-sent' })
      .select('error');
    for (const r of reasons) expect(r.error).toMatch(/^ENDPOINT_(DELETED|DISABLED): not sent/);
    // The scheduled deliveries' workflows were told and ended, long before their 30 s timer.
    for (const id of scheduled) {
      const run = await until(
        `delivery workflow ${id} to end`,
        async () => {
          const d = await svc.temporal.workflow.getHandle(deliveryWorkflowId(id)).describe();
          return d.status.name === 'RUNNING' ? undefined : d;
        },
        { timeoutMs: 20_000 },
      );
      expect(run.status.name).toBe('COMPLETED');
    }
    expect(await knex('webhook_endpoint_cleanups').where({ endpoint_id: hook.id })).toEqual([]);
  });

  it('schedules nothing from an attempt whose POST was in flight when its endpoint was deleted', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    // The receiver holds the POST 3 s, then answers 500: a failure that would schedule attempt 2 in 30 s.
    const hook = await registerHook(svc, receiver, staff, 'in-flight-delete', ['*'], {
      defaultStatus: 500,
      delayMs: 3000,
    });
    const id = await ping(staff, hook.id);
    await receiver.waitFor('in-flight-delete', 1);
    expect((await api.delete(`${base}/${hook.id}`, staff.token)).status).toBe(204);
    const knex = svc.orm.em.getConnection().getKnex();
    // The background stop has been and gone while the POST was still held.
    await until('the cleanup done', async () =>
      (await knex('webhook_endpoint_cleanups').where({ endpoint_id: hook.id })).length === 0 ? true : undefined,
    );
    // Seen failing before the fix: the late result wrote attempt 2's time, and the delivery waited
    // 30 s for a schedule its deleted endpoint will never take.
    const row = await until(
      'the late result recorded with nothing scheduled',
      async () => {
        const d: { status: string; next_attempt_at: Date | null; attempt_count: number } = await knex(
          'webhook_deliveries',
        )
          .where({ id })
          .first('status', 'next_attempt_at', 'attempt_count');
        return d.attempt_count >= 1 && d.status !== 'pending' ? d : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(row).toMatchObject({ status: 'failed', next_attempt_at: null });
  });
});
