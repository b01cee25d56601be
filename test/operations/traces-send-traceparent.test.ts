import { randomUUID } from 'node:crypto';
import { publishEvents } from '../../webhooks';
import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { PATHS, registerHook } from '../webhooks/support/hooks';
import type { Receiver } from '../webhooks/support/receiver';
import { startWebhookStack, stopWebhookStack } from '../webhooks/support/stack';

/** Traces: an endpoint that asks gets the publisher's traceparent, even with tracing off in the worker. */
describe('traces', () => {
  describe('send_traceparent with tracing off in the worker', () => {
    let svc: TestService;
    let receiver: Receiver;
    beforeAll(async () => {
      ({ svc, receiver } = await startWebhookStack('A'));
    });
    afterAll(() => stopWebhookStack({ svc, receiver }));

    it("passes on the event's stored traceparent (a publisher that traced), to endpoints that asked only", async () => {
      const staff = await actor(svc, newOrg(), ['staff']);
      const hooks = { asked: `asked-${randomUUID()}`, plain: `plain-${randomUUID()}` };
      const asked = await registerHook(svc, receiver, staff, hooks.asked, ['subscription.created']);
      await registerHook(svc, receiver, staff, hooks.plain, ['subscription.created']);
      const on = await http(svc.baseUrl).patch(`${PATHS.A.endpoints}/${asked.id}`, staff.token, {
        sendTraceparent: true,
      });
      expect(on.body.data.send_traceparent).toBe(true);

      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const event = {
        id: randomUUID(),
        type: 'subscription.created',
        source: 'service.issuance',
        orgId: staff.orgId,
        occurredAt: new Date().toISOString(),
        data: { id: randomUUID() },
      };
      // As a traced publisher leaves it: the traceparent stored with the event, in the publishing transaction.
      await svc.orm.em
        .getConnection()
        .getKnex()
        .transaction(async (trx) => {
          await publishEvents(trx, [event], { set: 'A' });
          await trx('events').where({ id: event.id }).update({ traceparent });
        });
      const [got] = await receiver.waitFor(hooks.asked, 1, 30_000);
      const [plain] = await receiver.waitFor(hooks.plain, 1, 30_000);
      expect(got!.verified).toBe(true);
      expect(got!.headers.traceparent).toBe(traceparent);
      expect(plain!.headers.traceparent).toBeUndefined();
    }, 60_000);
  });
});
