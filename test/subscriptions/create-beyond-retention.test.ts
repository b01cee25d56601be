import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { subscriptionWorkflowId } from '../../domain/subscription';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';
import { until } from '../support/wait';

/**
 * An Idempotency-Key names one subscription for good. Once its workflow has left
 * Temporal's retention (and the key's stored answer has expired), the same create must answer the
 * recorded subscription, never start a second workflow under its id and publish its events again.
 */
describe('create with an old Idempotency-Key, after the workflow is gone', () => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    svc = await startService({ set: 'A' });
    w = await lifecycleWorld(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  const create = (key: string) =>
    w.api.post(
      `/issuance/offerings/${w.offering.offeringId}/subscriptions`,
      w.investor.token,
      { securityClassId: w.offering.securityClassId, unitsSubscribed: 2 },
      { 'idempotency-key': key },
    );
  const sql = (text: string, params: unknown[]) => svc.orm.em.getConnection().execute(text, params);

  it('answers the recorded subscription and starts nothing', async () => {
    const key = randomUUID();
    const first = await create(key);
    expect(first.status).toBe(201);
    const id = first.body.data.id as string;
    expect((await w.api.delete(`/issuance/subscriptions/${id}`, w.investor.token)).status).toBe(204);

    // What retention leaves: no workflow in Temporal, no stored answer for the key.
    await svc.temporal.workflowService.deleteWorkflowExecution({
      namespace: svc.config.TEMPORAL_NAMESPACE,
      workflowExecution: { workflowId: subscriptionWorkflowId(id) },
    });
    const gone = () =>
      svc.temporal.workflow
        .getHandle(subscriptionWorkflowId(id))
        .describe()
        .then(
          () => false,
          (err) => {
            if (err instanceof WorkflowNotFoundError) return true;
            throw err;
          },
        );
    await until('the workflow to be deleted', gone, { timeoutMs: 20_000, intervalMs: 200 });
    await sql('delete from idempotency_keys where key = ?', [key]);

    const again = await create(key);
    expect([again.status, again.body.data?.id, again.body.data?.status]).toEqual([201, id, 'cancelled']);
    await expect(svc.temporal.workflow.getHandle(subscriptionWorkflowId(id)).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );
    const created = await sql(
      `select count(*)::int as n from events where type = 'subscription.created' and data->>'id' = ?`,
      [id],
    );
    expect(created[0]?.n).toBe(1);

    await sql('delete from idempotency_keys where key = ?', [key]);
    const otherBody = await w.api.post(
      `/issuance/offerings/${w.offering.offeringId}/subscriptions`,
      w.investor.token,
      { securityClassId: w.offering.securityClassId, unitsSubscribed: 3 },
      { 'idempotency-key': key },
    );
    expect([otherBody.status, otherBody.body.error?.code]).toEqual([409, 'IDEMPOTENCY_KEY_REUSED']);
  });
});
