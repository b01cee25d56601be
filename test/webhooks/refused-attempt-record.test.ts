import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, TemporalFailure } from '@temporalio/common';
import { deliveryWorkflowId } from '../../domain/webhook-messages';
import { registry } from '../../lib/runtime/metrics';
import { endpointStore, secretBoxFrom } from '../../webhooks';
import { webhookDeliveryWorkflow } from '../../workflows/webhook-delivery';
import { ownerUrlOf, startService, type TestService } from '../support/service';
import { anEvent, publishUnqueued } from './support/publish';

/**
 * A delivery workflow's attempt whose record PostgreSQL refuses for good (a constraint, SQLSTATE
 * class 23) is not retried without end: the attempt's local activity fails non-retryable, the
 * workflow fails with CONSTRAINT_REFUSED, seen in the Web UI and counted
 * (docs/decisions/0364-refused-records-end-the-command.md, docs/operators/runbooks.md). The refusal is a
 * CHECK, made as the database's owner, that refuses one delivery's attempts only.
 */
describe("a delivery workflow whose attempt's record is refused", () => {
  let svc: TestService;
  let owner: PgClient;

  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } });
    owner = new PgClient({ connectionString: ownerUrlOf(svc.config.DATABASE_URL) });
    await owner.connect();
  });
  afterAll(async () => {
    await owner?.end();
    await svc?.stop();
  });

  /** The ApplicationFailure types along a failure's causes. */
  const types = (err: unknown): string[] => {
    const found: string[] = [];
    for (let f: unknown = err; f instanceof Error; f = (f as TemporalFailure).cause) {
      if (f instanceof ApplicationFailure) found.push(String(f.type));
    }
    return found;
  };

  it('fails at once with CONSTRAINT_REFUSED, counted, the delivery left as it was', async () => {
    const orgId = randomUUID();
    const { row: endpoint } = await endpointStore(svc.orm, secretBoxFrom(svc.config)).create(orgId, {
      url: 'http://127.0.0.1:9/refused',
      description: 'refused attempt record',
      eventTypes: ['*'],
    });
    const event = anEvent(orgId);
    const {
      deliveries: [delivery],
    } = await publishUnqueued(svc, [event], [{ eventId: event.id, endpointId: endpoint.id }]);
    const deliveryId = delivery!.deliveryId;
    const name = `no_attempt_${randomUUID().slice(0, 8)}`;
    await owner.query(
      `alter table webhook_attempts add constraint ${name} check (delivery_id <> '${deliveryId}') not valid`,
    );
    try {
      const started = Date.now();
      const handle = await svc.temporal.workflow.start(webhookDeliveryWorkflow, {
        taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
        workflowId: deliveryWorkflowId(deliveryId),
        args: [{ deliveryId, statusShown: true }],
      });
      const ended = await Promise.race([
        handle.result().then(
          (outcome) => `ended ${outcome}`,
          (err: unknown) => err,
        ),
        new Promise((resolve) => setTimeout(() => resolve('still running after 20 s'), 20_000)),
      ]);
      // Seen failing before: still running after 20 s, the attempt retried without end.
      if (!(ended instanceof WorkflowFailedError)) {
        const described = await handle.describe();
        const attempt = described.raw.pendingActivities?.[0]?.attempt ?? 'none pending';
        throw new Error(`${String(ended)} (workflow ${described.status.name}, attempt ${attempt})`);
      }
      expect(types(ended)).toContain('CONSTRAINT_REFUSED');
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await owner.query(`alter table webhook_attempts drop constraint ${name}`);
    }
    const [row] = await svc.orm.em
      .getConnection()
      .execute<{ status: string; attempts: string }[]>(
        'select status, attempt_count::text as attempts from webhook_deliveries where id = ?',
        [deliveryId],
      );
    expect(row).toEqual({ status: 'pending', attempts: '0' });
    expect(await registry.getSingleMetricAsString('tranche_activity_failures_total')).toMatch(
      /tranche_activity_failures_total\{workflow_type="webhookDeliveryWorkflow",activity="attemptDelivery",failure="constraint_refused"\} 1\b/,
    );
  });
});
