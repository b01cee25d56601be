import { testDataConverter } from '../support/data-converter';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { recoveryWorkflowId } from '../../domain/recovery-messages';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { failedDeliveries } from './support/failed-deliveries';
import { PATHS, registerHook } from './support/hooks';
import { exited, printed, runTs } from './support/processes';
import type { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';
import { until } from '../support/wait';

const HOUR = 3600_000;
const BATCH = 25;

describe('bulk recovery: retry every failed or exhausted delivery of an endpoint since T', () => {
  let svc: TestService;
  let receiver: Receiver;
  let api: ReturnType<typeof http>;
  const base = PATHS.A.endpoints;
  const knex = () => svc.orm.em.getConnection().getKnex();
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    ({ svc, receiver, api } = await startWebhookStack('A', { WEBHOOK_RECOVERY_BATCH_SIZE: String(BATCH) }));
  });
  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGTERM');
    await Promise.all(workers.map(exited));
    await stopWebhookStack({ svc, receiver });
  });

  const setup = async (name: string) => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const hook = await registerHook(svc, receiver, staff, name, ['*']);
    return { staff, hook, path: `${base}/${hook.id}/recoveries` };
  };
  const outage = (
    endpoint: { orgId: string; endpointId: string },
    n: number,
    from: Date,
    status: 'failed' | 'exhausted' | 'success' = 'exhausted',
  ) =>
    failedDeliveries(
      knex(),
      endpoint,
      Array.from({ length: n }, (_, i) => ({ createdAt: new Date(from.getTime() + i * 1000), status })),
    );
  const finished = (who: Actor, path: string, id: string, timeoutMs = 120_000) =>
    until(
      `recovery ${id} to finish`,
      async () => {
        const r = (await api.get(`${path}/${id}`, who.token)).body.data;
        return r.status === 'completed' || r.status === 'cancelled' ? r : undefined;
      },
      { timeoutMs: timeoutMs },
    );
  const deliveries = (ids: string[]) =>
    knex()('webhook_deliveries').whereIn('id', ids).select('id', 'status', 'attempt_count');

  it('retries exactly the window’s failed and exhausted deliveries and reports its progress', async () => {
    const { staff, hook, path } = await setup('recover-all');
    const endpoint = { orgId: staff.orgId, endpointId: hook.id };
    const since = new Date(Date.now() - 48 * HOUR);
    const before = await outage(endpoint, 3, new Date(since.getTime() - HOUR));
    const exhausted = await outage(endpoint, 40, new Date(since.getTime() + HOUR));
    const failed = await outage(endpoint, 5, new Date(since.getTime() + 2 * HOUR), 'failed');
    const succeeded = await outage(endpoint, 2, new Date(since.getTime() + 3 * HOUR), 'success');

    const started = await api.post(path, staff.token, { since: since.toISOString() });
    expect(started.status).toBe(202);
    expect(started.body.data).toMatchObject({
      endpoint_id: hook.id,
      status: 'running',
      total: 45,
      done: 0,
      skipped: 0,
    });
    const result = await finished(staff, path, started.body.data.id);
    expect(result).toMatchObject({
      status: 'completed',
      total: 45,
      done: 45,
      skipped: 0,
      finished_at: expect.any(String),
    });

    const byId = new Map((await deliveries([...before, ...exhausted, ...failed, ...succeeded])).map((d) => [d.id, d]));
    await until('the exhausted and failed deliveries recovered', async () =>
      (await deliveries([...exhausted, ...failed])).every((d) => d.status === 'success') ? true : undefined,
    );
    expect(before.map((id) => byId.get(id))).toEqual(
      before.map((id) => ({ id, status: 'exhausted', attempt_count: 8 })),
    );
    expect(succeeded.map((id) => byId.get(id)!.attempt_count)).toEqual([1, 1]);
    const after = new Map((await deliveries([...exhausted, ...failed])).map((d) => [d.id, d.attempt_count]));
    expect(exhausted.map((id) => after.get(id))).toEqual(exhausted.map(() => 9)); // attempt 9: one more, numbered on
    expect(failed.map((id) => after.get(id))).toEqual(failed.map(() => 2)); // the next scheduled attempt, brought forward
    const got = await receiver.waitFor('recover-all', 45);
    expect(new Set(got.map((d) => d.headers['x-service-delivery-id']))).toEqual(new Set([...exhausted, ...failed]));
    expect(got.every((d) => d.verified)).toBe(true);

    const again = await api.delete(`${path}/${started.body.data.id}`, staff.token);
    expect([again.status, again.body.error.code]).toEqual([409, 'RECOVERY_FINISHED']);

    // Its history replays on this code; RECORD_HISTORIES=1 keeps it for test/replay.
    const history = await svc.temporal.workflow.getHandle(recoveryWorkflowId(started.body.data.id)).fetchHistory();
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! }, dataConverter: testDataConverter() },
      history,
    );
    if (process.env.RECORD_HISTORIES)
      writeFileSync(join(__dirname, '../replay/histories/webhook-recovery.json'), historyToJSON(history));
  }, 180_000);

  it('retries each delivery once when a whole outage shares one microsecond timestamp, the endpoint still down', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const hook = await registerHook(svc, receiver, staff, 'recover-same-instant', ['*'], { defaultStatus: 503 });
    const path = `${base}/${hook.id}/recoveries`;
    const since = new Date(Date.now() - 48 * HOUR);
    const ids = await outage(
      { orgId: staff.orgId, endpointId: hook.id },
      2 * BATCH + 3,
      new Date(since.getTime() + HOUR),
    );
    // As one planning round writes them: one now(), finer than a millisecond.
    await knex()('webhook_deliveries')
      .whereIn('id', ids)
      .update({
        created_at: knex().raw(`?::timestamptz + interval '456 microseconds'`, [new Date(since.getTime() + HOUR)]),
      });
    const started = await api.post(path, staff.token, { since: since.toISOString() });
    const result = await finished(staff, path, started.body.data.id);
    expect(result).toMatchObject({ status: 'completed', total: ids.length, done: ids.length, skipped: 0 });
    await receiver.waitFor('recover-same-instant', ids.length);
    // Every retry's result is recorded (a count moves when its result is written): a second retry of
    // any delivery would have been asked for by now, and shows below as a tenth attempt or a second POST.
    await until(
      'the result of every retried attempt recorded',
      () => deliveries(ids),
      (rows) => rows.length === ids.length && rows.every((d) => d.attempt_count >= 9),
    );
    const got = await receiver.received('recover-same-instant');
    expect(got.map((d) => d.headers['x-service-delivery-id']).sort()).toEqual([...ids].sort());
    expect((await deliveries(ids)).map((d) => d.attempt_count)).toEqual(ids.map(() => 9));
  });

  it('stops when cancelled, refuses a second one meanwhile, and says how far it got', async () => {
    const { staff, hook, path } = await setup('recover-cancel');
    const ids = await outage({ orgId: staff.orgId, endpointId: hook.id }, 500, new Date(Date.now() - 10 * HOUR));
    const started = await api.post(path, staff.token, { since: new Date(Date.now() - 24 * HOUR).toISOString() });
    const id = started.body.data.id;

    const second = await api.post(path, staff.token, { since: new Date(0).toISOString() });
    expect([second.status, second.body.error.code]).toEqual([409, 'RECOVERY_RUNNING']);
    const cancel = await api.delete(`${path}/${id}`, staff.token);
    expect([cancel.status, cancel.body.data.status]).toEqual([202, 'cancelling']);

    const result = await finished(staff, path, id);
    expect(result).toMatchObject({ status: 'cancelled', total: 500 });
    expect(result.done).toBeLessThan(500);
    const retried = (await deliveries(ids)).filter((d) => d.attempt_count > 8 || d.status !== 'exhausted');
    await until('an attempt for each delivery the cancelled recovery did', async () =>
      (await deliveries(ids)).filter((d) => d.attempt_count > 8).length >= result.done ? true : undefined,
    );
    expect(retried.length).toBeLessThanOrEqual(result.done);
    // Once it has stopped a new one may start.
    expect((await api.post(path, staff.token, { since: new Date(0).toISOString() })).status).toBe(202);
  }, 180_000);

  it('refuses to start on a disabled endpoint and answers 404 for another organisation’s recovery', async () => {
    const { staff, hook, path } = await setup('recover-refusals');
    await api.patch(`${base}/${hook.id}`, staff.token, { status: 'disabled' });
    const res = await api.post(path, staff.token, { since: new Date(0).toISOString() });
    expect([res.status, res.body.error.code]).toEqual([409, 'ENDPOINT_DISABLED']);
    const bad = await api.post(path, staff.token, { since: 'yesterday' });
    expect(bad.status).toBe(422);
    const other = await setup('recover-other');
    const theirs = await api.post(other.path, other.staff.token, { since: new Date().toISOString() });
    expect((await api.get(`${other.path}/${theirs.body.data.id}`, staff.token)).status).toBe(404);
    expect((await api.get(`${path}/${theirs.body.data.id}`, staff.token)).status).toBe(404);
  });

  it('retries only the deliveries created between since and an explicit until', async () => {
    const { staff, hook, path } = await setup('recover-until');
    const endpoint = { orgId: staff.orgId, endpointId: hook.id };
    const since = new Date(Date.now() - 10 * HOUR);
    const end = new Date(Date.now() - 5 * HOUR);
    const inside = await outage(endpoint, 4, new Date(since.getTime() + HOUR));
    const after = await outage(endpoint, 3, new Date(end.getTime() + HOUR));

    const started = await api.post(path, staff.token, { since: since.toISOString(), until: end.toISOString() });
    expect([started.status, started.body.data.until, started.body.data.total]).toEqual([202, end.toISOString(), 4]);
    const result = await finished(staff, path, started.body.data.id);
    expect(result).toMatchObject({ status: 'completed', total: 4, done: 4, skipped: 0 });
    await until('the deliveries inside the window recovered', async () =>
      (await deliveries(inside)).every((d) => d.status === 'success') ? true : undefined,
    );
    expect((await deliveries(inside)).map((d) => d.attempt_count)).toEqual(inside.map(() => 9));
    expect((await deliveries(after)).map((d) => [d.status, d.attempt_count])).toEqual(
      after.map(() => ['exhausted', 8]),
    );
  });

  it('refuses an end before the start, or in the future, in the one error envelope', async () => {
    const { staff, path } = await setup('recover-bad-until');
    const at = (ms: number) => new Date(Date.now() + ms).toISOString();
    const refusals = [
      { since: at(-HOUR), until: at(-2 * HOUR) },
      { since: at(-HOUR), until: at(-HOUR) },
      { since: at(-HOUR), until: at(HOUR) },
      { since: at(HOUR) },
    ];
    for (const body of refusals) {
      const res = await api.post(path, staff.token, body);
      expect([res.status, res.body.success, res.body.error.code]).toEqual([422, false, 'VALIDATION_FAILED']);
      expect(JSON.stringify(res.body.error)).toMatch(/until|since/);
    }
    expect(await knex()('webhook_recoveries').where({ org_id: staff.orgId }).count()).toEqual([{ count: '0' }]);
  });

  it("lists an endpoint's recoveries newest first, cursor-paged, and none of another organisation's", async () => {
    const { staff, hook, path } = await setup('recover-list');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const started = await api.post(path, staff.token, { since: new Date(Date.now() - HOUR).toISOString() });
      expect(started.status).toBe(202);
      await finished(staff, path, started.body.data.id);
      ids.unshift(started.body.data.id);
    }
    const first = await api.get(`${path}?limit=2`, staff.token);
    expect(first.status).toBe(200);
    expect(first.body.data.items.map((r: { id: string }) => r.id)).toEqual(ids.slice(0, 2));
    expect(first.body.data.items[0]).toMatchObject({ endpoint_id: hook.id, status: 'completed', total: 0 });
    const second = await api.get(`${path}?limit=2&cursor=${first.body.data.next_cursor}`, staff.token);
    expect(second.body.data).toEqual({ items: [expect.objectContaining({ id: ids[2] })], next_cursor: null });
    expect((await api.get(`${path}?cursor=nonsense`, staff.token)).body.error.code).toBe('INVALID_CURSOR');

    const other = await setup('recover-list-other');
    expect((await api.get(path, other.staff.token)).status).toBe(404);
    expect((await api.get(other.path, other.staff.token)).body.data).toEqual({ items: [], next_cursor: null });
  });

  // Last: it stops the service's own worker.
  it('survives its worker being stopped and a new worker process taking over', async () => {
    const { staff, hook, path } = await setup('recover-restart');
    const ids = await outage({ orgId: staff.orgId, endpointId: hook.id }, 400, new Date(Date.now() - 10 * HOUR));
    const started = await api.post(path, staff.token, { since: new Date(Date.now() - 24 * HOUR).toISOString() });
    const id = started.body.data.id;

    await until("the recovery's first batch done", async () =>
      (await api.get(`${path}/${id}`, staff.token)).body.data.done >= BATCH ? true : undefined,
    );
    svc.worker.shutdown();
    await until('the worker to stop', async () => (svc.worker.getState() === 'STOPPED' ? true : undefined), {
      timeoutMs: 60_000,
    });
    const paused = (await api.get(`${path}/${id}`, staff.token)).body.data;
    expect(paused.status).toBe('running');
    expect(paused.done).toBeLessThan(400);

    const next = runTs('worker/main.ts', {
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: svc.config.DATABASE_URL,
      TEMPORAL_ADDRESS: svc.config.TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: svc.config.TEMPORAL_TASK_QUEUE,
      WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
      WEBHOOK_RECOVERY_BATCH_SIZE: String(BATCH),
    });
    workers.push(next);
    await printed(next, 'worker started');

    const result = await finished(staff, path, id, 240_000);
    expect(result).toMatchObject({ status: 'completed', total: 400 });
    expect(result.done + result.skipped).toBeGreaterThanOrEqual(400);
    const rows = await until(
      'every delivery to succeed',
      async () => {
        const r = await deliveries(ids);
        return r.every((d) => d.status === 'success') ? r : undefined;
      },
      { timeoutMs: 180_000 },
    );
    // Each got its retry; a chunk cut off by the stop may have been sent again (at most one chunk).
    expect(rows.filter((d) => d.attempt_count < 9)).toEqual([]);
    expect(rows.filter((d) => d.attempt_count > 9).length).toBeLessThanOrEqual(20);
  }, 420_000);
});
