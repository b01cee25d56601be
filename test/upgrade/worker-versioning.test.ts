import { randomBytes } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { createDeliveryEngine, type RunningEngine } from '../../webhooks';
import { createProcessor } from '../../payments';
import { createWorker } from '../../worker/create-worker';
import { followRouting, type Routing } from '../../worker/deployment-routing';
import { clientOn } from '../../lib/runtime/temporal';
import { deliveryWorkflowId } from '../../domain/webhook-messages';
import { subscriptionWorkflowId } from '../../domain/subscription';
import type { DeploymentVersion } from '../../lib/runtime/build-id';
import { setCurrentVersion } from '../../scripts/lib/version-routing';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld } from '../support/subscriptions';
import { actor, newOrg, type Actor } from '../support/fixtures';
import { http } from '../support/http';
import { until } from '../support/wait';
import { Receiver } from '../webhooks/support/receiver';
import { PATHS, registerHook } from '../webhooks/support/hooks';

/**
 * Workers as Worker Deployment versions (docs/decisions/0386, 0387) on the dev server: each workflow type
 * runs with the behaviour workflows/index.ts states, and a version that new workflows are not routed to
 * starts no delivery workflow eagerly, which would pin the delivery to it.
 */
describe('versioned workers', () => {
  const deploymentName = `test-${randomBytes(4).toString('hex')}`;
  const v1: DeploymentVersion = { deploymentName, buildId: '1.0.0-aaaaaaaaaaaa' };
  const v2: DeploymentVersion = { deploymentName, buildId: '1.0.1-bbbbbbbbbbbb' };
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;
  let connection: Connection;
  // The second build's worker process, as worker/main.ts runs it: a Temporal worker and an engine.
  let second: {
    worker: Worker;
    running: Promise<void>;
    engine: RunningEngine;
    routing: Routing;
    native: NativeConnection;
  };

  const versioning = async (workflowId: string) => {
    const { raw } = await svc.temporal.workflow.getHandle(workflowId).describe();
    const info = raw.workflowExecutionInfo?.versioningInfo;
    return { behavior: info?.behavior, buildId: info?.deploymentVersion?.buildId };
  };
  const ping = async (endpointId: string): Promise<string> => {
    const res = await http(svc.baseUrl).post(`${PATHS.A.endpoints}/${endpointId}/test`, staff.token);
    expect(res.status).toBe(202);
    return res.body.data.delivery_id as string;
  };
  const PINNED = 1; // temporal.api.enums.v1.VersioningBehavior
  const AUTO_UPGRADE = 2;

  beforeAll(async () => {
    [svc, receiver] = await Promise.all([
      // Deliveries are the second build's engine's alone, so which build starts them is known.
      startService({
        set: 'A',
        env: { WEBHOOK_DELIVERY_SHAPE: 'workflow', WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' },
        version: v1,
        engine: false,
      }),
      Receiver.start(),
    ]);
    connection = await Connection.connect({ address: svc.config.TEMPORAL_ADDRESS });
    await setCurrentVersion(connection, svc.config.TEMPORAL_NAMESPACE, deploymentName, v1.buildId);
    staff = await actor(svc, newOrg(), ['staff']);
  }, 120_000);
  afterAll(async () => {
    if (second) {
      second.routing.stop();
      await second.engine.stop();
      second.worker.shutdown();
      await second.running;
      await second.native.close();
    }
    await svc?.stop();
    await receiver?.stop();
    await connection?.close();
  });

  it('runs a subscription as AUTO_UPGRADE on the Current version', async () => {
    const w = await lifecycleWorld(svc);
    const s = await w.create();
    expect(await versioning(subscriptionWorkflowId(s.id))).toEqual({ behavior: AUTO_UPGRADE, buildId: v1.buildId });
  });

  it('pins a delivery to the Current version when a version not routed to starts it', async () => {
    const native = await NativeConnection.connect({ address: svc.config.TEMPORAL_ADDRESS });
    const client = clientOn(native, svc.config);
    const worker = await createWorker({
      config: svc.config,
      version: v2,
      connection: native,
      workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
      deps: {
        orm: svc.orm,
        processor: createProcessor(svc.config, { orm: svc.orm }),
        engine: createDeliveryEngine({ orm: svc.orm, config: svc.config }),
        config: svc.config,
      },
    });
    const running = worker.run();
    const routing = followRouting(client, svc.config.TEMPORAL_NAMESPACE, v2);
    const engine = await createDeliveryEngine({ orm: svc.orm, config: svc.config }).start({
      temporal: client,
      taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
      eagerStarts: routing.routedHere,
    });
    second = { worker, running, engine, routing, native };

    const endpoint = await registerHook(svc, receiver, staff, 'v1-ping', ['*']);
    const deliveryId = await ping(endpoint.id);
    await receiver.waitFor('v1-ping', 1);
    expect(await svc.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId)).result()).toBe('success');
    // Version 2 is not Current: its engine's start was routed to version 1, which kept it to the end.
    expect(await versioning(deliveryWorkflowId(deliveryId))).toEqual({ behavior: PINNED, buildId: v1.buildId });
  });

  it('starts deliveries on a new Current version, and moves the subscription at its next task', async () => {
    const w = await lifecycleWorld(svc);
    const s = await w.create();
    expect((await versioning(subscriptionWorkflowId(s.id))).buildId).toBe(v1.buildId);
    await setCurrentVersion(connection, svc.config.TEMPORAL_NAMESPACE, deploymentName, v2.buildId);
    await until('version 2 routed to, as its worker reads it', async () => second.routing.routedHere(), {
      timeoutMs: 20_000,
      intervalMs: 200,
    });
    const endpoint = await registerHook(svc, receiver, staff, 'v2-ping', ['*']);
    const deliveryId = await ping(endpoint.id);
    await receiver.waitFor('v2-ping', 1);
    expect(await svc.temporal.workflow.getHandle(deliveryWorkflowId(deliveryId)).result()).toBe('success');
    expect(await versioning(deliveryWorkflowId(deliveryId))).toEqual({ behavior: PINNED, buildId: v2.buildId });
    // The next command is the subscription's next task: version 2 runs it.
    expect((await w.post(s.id, 'request-signature', w.investor)).status).toBe(200);
    expect(await versioning(subscriptionWorkflowId(s.id))).toEqual({ behavior: AUTO_UPGRADE, buildId: v2.buildId });
  });
});
