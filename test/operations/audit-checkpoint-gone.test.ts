import { Client, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { auditCheckpointWorkflowId, AUDIT_CHECKPOINT_WORKFLOW } from '../../domain/audit-checkpoint';
import { ensureAuditCheckpoints, latestAuditCheckpoint } from '../../worker/audit-checkpoints';
import { startService, type TestService } from '../support/service';
import { until } from '../support/wait';
import { asSuperuser, auditedOrg, auditVerify, checkpointNow } from './support/audit-tamper';

// Short, so the test waits past twice it; long enough that a loaded host keeps a running workflow fresher than that.
const INTERVAL_SECONDS = 5;

/**
 * The checkpoint workflow stopped or deleted (docs/decisions/0380-audit-checkpoint-gone-is-seen.md): whoever
 * holds Temporal could terminate or delete it, and whoever also holds the database could then delete entries and
 * let a worker's next start sign a fresh checkpoint over what is left. `npm run -s audit:verify` names a checkpoint
 * older than twice its interval, and a worker finding none while the trail has entries starts none.
 */
describe('the audit checkpoint workflow, stopped or deleted', () => {
  let svc: TestService;
  const workflowId = () => auditCheckpointWorkflowId(svc.config.TEMPORAL_TASK_QUEUE);

  beforeAll(async () => {
    svc = await startService({
      set: 'A',
      auditCheckpoints: true,
      env: { AUDIT_CHECKPOINT_INTERVAL_SECONDS: String(INTERVAL_SECONDS) },
    });
  }, 120_000);
  afterAll(() => svc?.stop());

  it('fails audit:verify naming the age once the newest checkpoint is older than twice its interval', async () => {
    const org = await auditedOrg(svc, 3);
    await checkpointNow(svc);
    expect(await auditVerify(svc, org)).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('3 entries, chain holds'),
    });

    await svc.temporal.workflow.getHandle(workflowId()).terminate('someone who holds Temporal');
    const last = (await latestAuditCheckpoint(svc.temporal, svc.config))!;
    // Past twice the interval since the last checkpoint.
    await new Promise((r) =>
      setTimeout(r, Math.max(0, Date.parse(last.takenAt) + 2 * INTERVAL_SECONDS * 1000 + 1500 - Date.now())),
    );
    const verdict = await auditVerify(svc, org);
    expect(verdict.code).toBe(2);
    const age = /the latest audit checkpoint, of (\S+), is (\d+) s old: more than twice its interval \(2 × 5 s,/.exec(
      verdict.stderr,
    );
    expect(age?.[1]).toBe(last.takenAt);
    expect(Number(age?.[2])).toBeGreaterThan(2 * INTERVAL_SECONDS);
    expect(verdict.stderr).toContain(`the workflow ${workflowId()} has stopped`);
    expect(verdict.stderr).toContain('3 entries hold against it');
  }, 60_000);

  it('starts no fresh checkpoint over a trail whose last checkpoint is gone, so a deletion stays seen', async () => {
    const org = await auditedOrg(svc, 4);
    await ensureAuditCheckpoints(svc.temporal, svc.config, svc.orm.em.getConnection().getKnex());
    const before = await checkpointNow(svc);
    expect(before.heads).toContainEqual(expect.objectContaining({ orgId: org, seq: '4' }));

    // Whoever holds both: the workflow deleted (no memo left to find), then the tail.
    await svc.temporal.workflowService.deleteWorkflowExecution({
      namespace: svc.config.TEMPORAL_NAMESPACE,
      workflowExecution: { workflowId: workflowId() },
    });
    await until(
      'the checkpoint workflow gone',
      () =>
        svc.temporal.workflow
          .getHandle(workflowId())
          .describe()
          .then(
            () => false,
            (err: unknown) => err instanceof WorkflowNotFoundError,
          ),
      (gone) => gone,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    await asSuperuser(svc, (db) => db.query(`delete from audit_events where org_id = $1 and seq >= 3`, [org]));

    // A worker starting now finds no checkpoint and entries in the trail: it signs none over them.
    const restart = await ensureAuditCheckpoints(svc.temporal, svc.config, svc.orm.em.getConnection().getKnex()).then(
      () => 'started',
      (err: Error) => err.message,
    );
    if (restart === 'started')
      await until(
        'its first checkpoint',
        () => latestAuditCheckpoint(svc.temporal, svc.config),
        (c) => c !== null,
      );
    const verdict = await auditVerify(svc, org);
    expect([verdict.code, verdict.stdout]).toEqual([2, '']);
    expect(restart).toMatch(
      /^no audit checkpoint at workflow \S+, though the audit trail holds entries: .*none is started/,
    );
    await expect(svc.temporal.workflow.getHandle(workflowId()).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
    expect(verdict.stderr).toContain(`no audit checkpoint at workflow ${workflowId()}`);

    // Nor over a run that left no checkpoint: one a client without the payload keys started in its place (it
    // fails at once, its input refused: docs/decisions/0379-unsealed-payloads-refused.md).
    const stranger = new Client({ connection: svc.temporal.connection, namespace: svc.config.TEMPORAL_NAMESPACE });
    const planted = await stranger.workflow.start(AUDIT_CHECKPOINT_WORKFLOW, {
      workflowId: workflowId(),
      taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
      args: [{ previous: null, everySeconds: INTERVAL_SECONDS }],
    });
    await expect(svc.temporal.workflow.getHandle(workflowId(), planted.firstExecutionRunId).result()).rejects.toThrow(
      WorkflowFailedError,
    );
    await expect(
      ensureAuditCheckpoints(svc.temporal, svc.config, svc.orm.em.getConnection().getKnex()),
    ).rejects.toThrow(/^no audit checkpoint at workflow \S+, though the audit trail holds entries/);
    expect(await latestAuditCheckpoint(svc.temporal, svc.config)).toBeNull();

    // An operator who means it starts one over the present heads, as the record says; from then on it holds.
    await svc.temporal.workflow.start(AUDIT_CHECKPOINT_WORKFLOW, {
      workflowId: workflowId(),
      taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
      args: [{ previous: null, everySeconds: INTERVAL_SECONDS }],
    });
    await until(
      'a fresh checkpoint',
      () => latestAuditCheckpoint(svc.temporal, svc.config),
      (c) => c !== null,
      {
        timeoutMs: 30_000,
        intervalMs: 200,
      },
    );
    expect(await auditVerify(svc, org)).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('2 entries, chain holds'),
    });
  }, 90_000);
});
