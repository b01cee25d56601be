import { actor, newOrg } from '../support/fixtures';
import type { http } from '../support/http';
import type { TestService } from '../support/service';
import { deliveryWorkflowId } from '../../domain/webhook-messages';
import { PATHS } from './support/hooks';
import { Receiver } from './support/receiver';
import { until } from '../support/wait';
import { timerPending } from './support/webhook-harness';
import { startWebhookStack, stopWebhookStack, throttledFailingPings } from './support/stack';

/**
 * Every failed delivery keeps a schedule (docs/decisions/0291-every-hand-over-lands.md): a manual
 * retry of a `pending` delivery that races the dispatcher's claim of attempt 1 no longer ends its
 * run `superseded` and leaves the dispatcher's hand-over to be refused by the closed run.
 */
describe('every hand-over lands', () => {
  const set = 'A';
  let svc: TestService;
  let receiver: Receiver;
  let api: ReturnType<typeof http>;

  beforeAll(async () => {
    ({ svc, receiver, api } = await startWebhookStack(set, { WEBHOOK_CIRCUIT_FAILURES: '1000' }));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  it('a manual retry racing the dispatcher’s first attempt leaves the delivery on its schedule', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    // A rate limit of 1/s keeps the pings queued: a manual retry's attempt is throttled (its number
    // given back) while the dispatcher claims that same number 1 at the delivery's turn.
    const { ids } = await throttledFailingPings({ svc, receiver, api }, staff, 'race-retry', 5);
    for (const id of ids.slice(1)) {
      const res = await api.post(`${PATHS[set].deliveries}/${id}/retry`, staff.token);
      expect([202, 409]).toContain(res.status); // 409: it succeeded or was retried meanwhile (not here: all fail)
    }

    // Every delivery failed and waits for its next attempt on a running schedule (the next is minutes away).
    // Seen failing before the fix: raced ones sat `failed` with their workflow closed and nothing to retry them.
    for (const id of ids) {
      const run = await until(`delivery ${id} failed with a workflow`, async () => {
        const d = await svc.temporal.workflow
          .getHandle(deliveryWorkflowId(id))
          .describe()
          .catch(() => undefined);
        const row: { status: string } | undefined = await svc.orm.em
          .getConnection()
          .getKnex()('webhook_deliveries')
          .where({ id })
          .first('status');
        return d && row?.status === 'failed' ? d : undefined;
      });
      // Settled, not slept on: no workflow task outstanding and the run holding its timer (or closed,
      // which the expectation below names); then it must still be open, holding the schedule.
      const handle = svc.temporal.workflow.getHandle(deliveryWorkflowId(id));
      await until(`delivery ${id}'s run settled`, async () => {
        const d = await handle.describe();
        return d.status.name !== 'RUNNING' || (!d.raw.pendingWorkflowTask && (await timerPending(handle)));
      });
      const again = await svc.temporal.workflow.getHandle(deliveryWorkflowId(id)).describe();
      expect({ id, status: again.status.name }).toEqual({ id, status: 'RUNNING' });
      expect(run.workflowId).toBe(deliveryWorkflowId(id));
    }
  });
});
