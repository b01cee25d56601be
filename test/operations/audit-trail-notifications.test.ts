import { resealWebhookSecrets } from '../../scripts/webhook-secrets';
import { secretBoxFrom } from '../../webhooks/secrets/secret-box';
import type { TestService } from '../support/service';
import type { LifecycleWorld } from '../support/subscriptions';
import { until } from '../support/wait';
import { auditTrailKit, k1, k2, startAuditStack } from './support/audit-trail';

/**
 * The audit trail (docs/decisions/0204-audit-one-table-one-chain-per-organisation.md; webhook endpoints,
 * recoveries, redeliveries and reseals): every audited action, once in each behaviour set, leaves exactly
 * one entry with its actor and outcome; a refusal is recorded as refused. The other subjects are in the
 * audit-trail-*.test.ts files beside this one.
 */
describe.each(['A', 'B'] as const)('Set %s: the audit trail of webhook notifications', (set) => {
  let svc: TestService;
  let w: LifecycleWorld;

  beforeAll(async () => {
    ({ svc, w } = await startAuditStack(set));
  }, 120_000);
  afterAll(() => svc?.stop());

  const { sql, hooks, entries, one, expectOk } = auditTrailKit(set, () => ({ svc, w }));

  it('records webhook endpoints created, changed, disabled, re-enabled, re-subscribed, rotated and deleted', async () => {
    const ep = expectOk(
      await w.api.post(hooks(), w.staff.token, {
        url: 'http://127.0.0.1:9/hook',
        eventTypes: ['subscription.created'],
      }),
      201,
    );
    expect((await one('webhook_endpoint.create', ep.id, w.staff)).after).toMatchObject({
      url: 'http://127.0.0.1:9/hook',
      status: 'enabled',
    });
    expectOk(await w.api.patch(`${hooks()}/${ep.id}`, w.staff.token, { description: 'ops' }));
    await one('webhook_endpoint.update', ep.id, w.staff);
    expectOk(await w.api.patch(`${hooks()}/${ep.id}`, w.staff.token, { status: 'disabled' }));
    const disabled = await one('webhook_endpoint.disable', ep.id, w.staff);
    expect([disabled.before?.status, disabled.after?.status]).toEqual(['enabled', 'disabled']);
    expectOk(await w.api.patch(`${hooks()}/${ep.id}`, w.staff.token, { status: 'enabled' }));
    await one('webhook_endpoint.enable', ep.id, w.staff);
    expectOk(await w.api.put(`${hooks()}/${ep.id}/subscriptions`, w.staff.token, { eventTypes: ['*'] }));
    expect((await one('webhook_endpoint.set_event_types', ep.id, w.staff)).after).toEqual({ event_types: ['*'] });
    const rotated = expectOk(await w.api.post(`${hooks()}/${ep.id}/rotate-secret`, w.staff.token));
    const rotation = await one('webhook_endpoint.rotate_secret', ep.id, w.staff);
    expect(JSON.stringify(rotation)).not.toContain(rotated.signing_secret);
    expect((await w.api.delete(`${hooks()}/${ep.id}`, w.staff.token)).status).toBe(204);
    await one('webhook_endpoint.delete', ep.id, w.staff);

    // Deleted: a further change is refused, and recorded as refused.
    expect((await w.api.patch(`${hooks()}/${ep.id}`, w.staff.token, { description: 'x' })).status).toBe(404);
    const refused = (await entries({ subject: ep.id })).filter((e) => e.outcome === 'refused');
    expect(refused.map((e) => [e.action, e.error_code])).toEqual([['webhook_endpoint.update', 'NOT_FOUND']]);
  });

  it('records bulk webhook recoveries started and cancelled, refusals included', async () => {
    const ep = expectOk(
      await w.api.post(hooks(), w.staff.token, { url: 'http://127.0.0.1:9/recover', eventTypes: ['*'] }),
      201,
    );
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const started = expectOk(await w.api.post(`${hooks()}/${ep.id}/recoveries`, w.staff.token, { since }), 202);
    expect((await one('webhook_recovery.start', started.id, w.staff)).after).toMatchObject({
      endpoint_id: ep.id,
      since,
    });

    // One running (inserted here so it is still running when cancelled): cancelled, then refused as finished.
    const running = '0b5f3c1e-4d2a-4c8e-9f10-2a6e1d7c3b51';
    await sql().execute(
      `update webhook_recoveries set status = 'completed', finished_at = now() where endpoint_id = ? and status = 'running'`,
      [ep.id],
    );
    await sql().execute(
      `insert into webhook_recoveries (id, org_id, endpoint_id, since, until, total) values (?, ?, ?, now() - interval '1 hour', now(), 0)`,
      [running, w.org, ep.id],
    );
    expectOk(await w.api.delete(`${hooks()}/${ep.id}/recoveries/${running}`, w.staff.token), 202);
    expect((await one('webhook_recovery.cancel', running, w.staff)).after).toMatchObject({
      cancel_requested_at: expect.any(String),
    });
    await sql().execute(`update webhook_recoveries set status = 'cancelled', finished_at = now() where id = ?`, [
      running,
    ]);
    expect((await w.api.delete(`${hooks()}/${ep.id}/recoveries/${running}`, w.staff.token)).status).toBe(409);
    const refusedCancel = (await entries({ subject: running })).filter((e) => e.outcome === 'refused');
    expect(refusedCancel.map((e) => [e.action, e.error_code])).toEqual([
      ['webhook_recovery.cancel', 'RECOVERY_FINISHED'],
    ]);

    // A disabled endpoint's recovery is refused, and recorded against the endpoint.
    expectOk(await w.api.patch(`${hooks()}/${ep.id}`, w.staff.token, { status: 'disabled' }));
    expect((await w.api.post(`${hooks()}/${ep.id}/recoveries`, w.staff.token, { since })).status).toBe(409);
    await one('webhook_recovery.start', ep.id, w.staff, 'ENDPOINT_DISABLED');
  });

  it('records a manual redelivery of one delivery with its status, and a refused one (a success) as refused', async () => {
    const deliveries = `/notifications${set === 'A' ? '/webhook-deliveries' : '/deliveries'}`;
    const ep = expectOk(
      await w.api.post(hooks(), w.staff.token, { url: 'http://127.0.0.1:9/redeliver', eventTypes: ['*'] }),
      201,
    );
    const { delivery_id } = expectOk(await w.api.post(`${hooks()}/${ep.id}/test`, w.staff.token), 202);
    // Nothing listens on port 9: the first attempt fails and the delivery waits on its schedule.
    const statusOf = async () => expectOk(await w.api.get(`${deliveries}/${delivery_id}`, w.staff.token)).status;
    expect(await until(`delivery ${delivery_id} failed`, statusOf, (status) => status === 'failed')).toBe('failed');

    expectOk(await w.api.post(`${deliveries}/${delivery_id}/retry`, w.staff.token), 202);
    const retried = await one('webhook_delivery.retry', delivery_id, w.staff);
    expect(retried).toMatchObject({
      subject_type: 'webhook_delivery',
      actor_roles: ['staff'],
      before: { status: 'failed' },
      after: { status: 'failed', retry: 'requested' },
    });

    // A success has nothing to retry: refused, and recorded as refused beside the one that succeeded.
    await sql().execute(`update webhook_deliveries set status = 'success' where id = ?`, [delivery_id]);
    const refused = await w.api.post(`${deliveries}/${delivery_id}/retry`, w.staff.token);
    expect(refused.status).toBe(409);
    const all = (await entries({ subject: delivery_id })).filter((e) => e.action === 'webhook_delivery.retry');
    expect(all.map((e) => [e.outcome, e.error_code, e.before, e.after])).toEqual([
      ['succeeded', null, { status: 'failed' }, { status: 'failed', retry: 'requested' }],
      ['refused', 'DELIVERY_SUCCEEDED', { status: 'success' }, null],
    ]);
    expect(all[1]!.actor_user_id).toBe(w.staff.userId);
  });

  it('records each endpoint whose signing secrets a reseal moved to the new key, with the system as actor', async () => {
    const ep = expectOk(
      await w.api.post(hooks(), w.staff.token, { url: 'http://127.0.0.1:9/reseal', eventTypes: ['*'] }),
      201,
    );
    const rotated = secretBoxFrom({
      ...svc.config,
      WEBHOOK_SECRET_KEYS: [
        { id: 'k2', key: Buffer.from(k2, 'base64') },
        { id: 'k1', key: Buffer.from(k1, 'base64') },
      ],
    });
    await resealWebhookSecrets(svc.orm, rotated);
    const resealed = await one('webhook_endpoint.reseal_secret', ep.id, { userId: 'system', orgId: w.org, token: '' });
    expect(resealed).toMatchObject({
      actor_roles: ['system'],
      actor_session: 'cli:webhook-secrets',
      before: { secret_key_ids: ['k1'] },
      after: { secret_key_ids: ['k2'] },
    });
    // Run again: nothing left under the old key, no new entry.
    await resealWebhookSecrets(svc.orm, rotated);
    await one('webhook_endpoint.reseal_secret', ep.id, { userId: 'system', orgId: w.org, token: '' });
  });
});
