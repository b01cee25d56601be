import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { shardOf } from '../../activities/event-dispatcher';
import { batcherWorkflowId } from '../../domain/webhook-messages';
import { startService } from '../support/service';
import { Receiver } from '../webhooks/support/receiver';
import { webhookOps } from '../webhooks/support/webhook-harness';

it('records webhook histories', async () => {
  const svc = await startService({ set: 'A', env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } });
  const receiver = await Receiver.start();
  try {
    const ops = webhookOps({ config: svc.config, orm: svc.orm, client: svc.temporal, taskQueue: svc.config.TEMPORAL_TASK_QUEUE, receiver });
    const okEndpoint = await ops.endpoint('rec-ok');
    const endpoint = await ops.endpoint('rec', { responses: [500], defaultStatus: 200 });
    await ops.publish(okEndpoint.id);
    const { handle, eventId } = await ops.publish(endpoint.id);
    await ops.attemptsReach((await ops.publish(okEndpoint.id)).deliveryId, 1);
    for (;;) {
      if (await handle.describe().then(() => true, () => false)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await handle.result()).toBe('success');
    const dir = join(__dirname, 'histories');
    writeFileSync(join(dir, 'webhook-delivery-retried.json'), historyToJSON(await handle.fetchHistory()));
    const batcher = svc.temporal.workflow.getHandle(batcherWorkflowId(svc.config.TEMPORAL_TASK_QUEUE, shardOf(eventId, svc.config.WEBHOOK_BATCHER_SHARDS)));
    writeFileSync(join(dir, 'delivery-batcher.json'), historyToJSON(await batcher.fetchHistory()));
  } finally {
    await receiver.stop();
    await svc.stop();
  }
}, 180_000);
