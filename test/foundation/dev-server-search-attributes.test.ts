import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../scripts/lib/free-port';
import { startTemporalDevServer, type RunningTemporal } from '../../scripts/lib/temporal-dev-server';
import { WebhookDeliveryStatusKey, WebhookEndpointIdKey, WebhookEventTypeKey } from '../../domain/search-attributes';
import { until } from '../support/wait';

/**
 * The dev server keeps its search attribute cache (docs/decisions/0352-dev-server-search-attribute-cache.md):
 * what holds it up is that every attribute the workflows write is registered at start, so the very first
 * workflow of a new server is filed, and found, by them. No worker runs: a started workflow is listed
 * whether or not it has run.
 */
describe('a new dev server', () => {
  let temporal: RunningTemporal;
  let connection: Connection;

  beforeAll(async () => {
    temporal = await startTemporalDevServer({ binary: process.env.TEMPORAL_CLI!, port: await freePort() });
    connection = await Connection.connect({ address: temporal.address });
  }, 60_000);
  afterAll(async () => {
    await connection?.close();
    await temporal?.stop();
  });

  it("files its first workflow by the service's search attributes, and finds it by them", async () => {
    const client = new Client({ connection });
    const endpointId = randomUUID();
    const handle = await client.workflow.start('webhookDeliveryWorkflow', {
      taskQueue: `no-worker-${randomUUID()}`,
      workflowId: `first-${endpointId}`,
      args: [],
      typedSearchAttributes: [
        { key: WebhookEndpointIdKey, value: endpointId },
        { key: WebhookEventTypeKey, value: 'webhook.test' },
        { key: WebhookDeliveryStatusKey, value: 'pending' },
      ],
    });

    const described = await handle.describe();
    expect(described.typedSearchAttributes.get(WebhookEndpointIdKey)).toBe(endpointId);
    // Visibility is written after the start answers: asked until it is there, for at most 10 s.
    const query = `WebhookEndpointId = "${endpointId}" AND WebhookDeliveryStatus = "pending"`;
    const found = await until(
      `the first workflow listed by ${query}`,
      async () => {
        const ids: string[] = [];
        for await (const w of client.workflow.list({ query })) ids.push(w.workflowId);
        return ids.length > 0 ? ids : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(found).toEqual([handle.workflowId]);
    await handle.terminate('test over');
  }, 30_000);
});
