import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import * as m from '../../domain/subscription-messages';
import { subscriptionWorkflowId } from '../../domain/subscription';
import { registry } from '../../lib/runtime/metrics';
import { ownerUrlOf, startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';
import { actor, consoleToken, createSubscription, newOrg, openOffering } from '../support/fixtures';
import { until } from '../support/wait';

/**
 * A command whose effect PostgreSQL refuses to store (a data or constraint error, SQLSTATE classes
 * 22 and 23) is refused at once with 422 COMMAND_NOT_RECORDED, naming the step, and leaves the
 * subscription as it was and answering (docs/decisions/0364-refused-records-end-the-command.md). The
 * refusals are made in the test's own database, as its owner: a CHECK constraint, or a string jsonb
 * will not take sent straight to the workflow, past the API's input checks.
 */
describe('a command whose effect cannot be recorded', () => {
  let svc: TestService;
  let w: LifecycleWorld;
  let owner: PgClient;
  const asOwner = (sql: string) => owner.query(sql);

  beforeAll(async () => {
    // A short command deadline: a command that hangs shows as 503 in seconds, not in a minute.
    svc = await startService({ set: 'A', env: { COMMAND_TIMEOUT_MS: '8000', IDEMPOTENCY_KEY_TTL_SECONDS: '3' } });
    w = await lifecycleWorld(svc);
    owner = new PgClient({ connectionString: ownerUrlOf(svc.config.DATABASE_URL) });
    await owner.connect();
  });
  afterAll(async () => {
    await owner?.end();
    await svc?.stop();
  });

  const view = async (id: string) => (await w.api.get(`/issuance/subscriptions/${id}`, w.staff.token)).body.data;

  it('answers 422 COMMAND_NOT_RECORDED at once when a constraint refuses it, and the subscription takes the next command', async () => {
    const s = await w.inReviewByWire();
    const name = `no_reject_${randomUUID().slice(0, 8)}`;
    await asOwner(
      `alter table subscriptions add constraint ${name} check (status <> 'rejected' or id <> '${s.id}') not valid`,
    );
    try {
      const started = Date.now();
      const refused = await w.post(s.id, 'reject', w.staff, { reason: 'Not this one' });
      // Seen failing before: 503 COMMAND_OUTCOME_UNKNOWN after the whole deadline, and every later
      // command the same, queued behind the projection's endless retries.
      expect([refused.status, refused.body.error?.code]).toEqual([422, 'COMMAND_NOT_RECORDED']);
      expect(refused.body.error.details).toMatchObject({ step: 'recordTransition', failure: 'CONSTRAINT_REFUSED' });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect((await view(s.id)).status).toBe('pending_review');

      const approved = await w.post(s.id, 'approve', w.staff);
      expect([approved.status, approved.body.data?.status]).toEqual([200, 'approved']);
    } finally {
      await asOwner(`alter table subscriptions drop constraint ${name}`);
    }
  });

  it('refuses a state jsonb will not store (an unpaired surrogate) sent straight to the workflow, and answers the next command', async () => {
    const s = await w.inReviewByWire();
    const handle = svc.temporal.workflow.getHandle(subscriptionWorkflowId(s.id));
    const sent = await svc.temporal.connection
      .withDeadline(Date.now() + 8_000, () =>
        handle.executeUpdate(m.requestInfo, { args: [{ reason: 'Proof of address \uD800', actorId: w.staff.userId }] }),
      )
      .then(
        () => 'recorded',
        (err: unknown) => err,
      );
    // Seen failing before: the update never answered (DEADLINE_EXCEEDED), the projection retrying without end.
    expect(sent).toBeInstanceOf(WorkflowUpdateFailedError);
    const cause = (sent as WorkflowUpdateFailedError).cause as ApplicationFailure;
    expect([cause.type, cause.nonRetryable]).toEqual(['COMMAND_NOT_RECORDED', true]);
    expect(cause.details?.[0]).toMatchObject({
      status: 422,
      details: { step: 'recordTransition', failure: 'DATA_REFUSED' },
    });

    const asked = await w.post(s.id, 'request-info', w.staff, { reason: 'Proof of address, please' });
    expect([asked.status, asked.body.data?.status]).toEqual([200, 'pending_review']);
    const metrics = await registry.getSingleMetricAsString('tranche_activity_failures_total');
    expect(metrics).toMatch(
      /tranche_activity_failures_total\{workflow_type="subscriptionWorkflow",activity="recordTransition",failure="data_refused"\} [1-9]/,
    );
  });

  it('answers a create whose first record is refused with 422 at once, ends its run and gives its capacity back, every time its key is sent', async () => {
    const offering = await openOffering(svc, w.staff, '10.00');
    const committed = async () => {
      const [row] = await svc.orm.em
        .getConnection()
        .execute<{ committed_amount: string }[]>('select committed_amount from offerings where id = ?', [
          offering.offeringId,
        ]);
      return Number(row!.committed_amount);
    };
    const name = `no_create_${randomUUID().slice(0, 8)}`;
    await asOwner(
      `alter table subscriptions add constraint ${name} check (offering_id <> '${offering.offeringId}') not valid`,
    );
    const key = { 'idempotency-key': randomUUID() };
    const create = () => createSubscription(w.api, w.investor.token, offering, { unitsSubscribed: 3 }, key);
    const started = Date.now();
    const refused = await create();
    // Seen failing before: 503 COMMAND_OUTCOME_UNKNOWN after the whole deadline, with 30.00 still committed.
    expect([refused.status, refused.body.error?.code]).toEqual([422, 'COMMAND_NOT_RECORDED']);
    expect(refused.body.error.details).toMatchObject({ step: 'recordTransition', failure: 'CONSTRAINT_REFUSED' });
    expect(Date.now() - started).toBeLessThan(5_000);
    await until('the refused create to give its capacity back', committed, (c) => c === 0);
    // The run ended, failed with the refusal: nothing left running to hold anything.
    const id = refused.body.error.details.subscription_id as string;
    const described = await svc.temporal.workflow.getHandle(subscriptionWorkflowId(id)).describe();
    expect(described.status.name).toBe('FAILED');

    // The same key answers the same refusal, from the API's kept answer and, once that expired
    // (IDEMPOTENCY_KEY_TTL_SECONDS), from Temporal's record of the same Update; and holds nothing.
    const replayed = await create();
    expect([replayed.status, replayed.headers.get('idempotent-replayed')]).toEqual([422, 'true']);
    await asOwner(`alter table subscriptions drop constraint ${name}`);
    const expired = await until(
      'the kept answer to expire',
      create,
      (r) => r.headers.get('idempotent-replayed') !== 'true',
      {
        intervalMs: 500,
      },
    );
    expect([expired.status, expired.body.error?.code]).toEqual([422, 'COMMAND_NOT_RECORDED']);
    expect(await committed()).toBe(0);
    // A new key creates it once it can be stored, holding its capacity once.
    const created = await createSubscription(
      w.api,
      w.investor.token,
      offering,
      { unitsSubscribed: 3 },
      {
        'idempotency-key': randomUUID(),
      },
    );
    expect([created.status, created.body.data?.status]).toEqual([201, 'draft']);
    expect(await committed()).toBe(30);
  });

  it('lists a subscription whose step keeps failing for a reason retrying may cure, and clears it once the step lands', async () => {
    const s = await w.inReviewByWire();
    await asOwner('revoke update on subscriptions from tranche_service');
    let granted = false;
    try {
      const approving = w.post(s.id, 'approve', w.staff);
      type Item = { subscription_id: string; failed_attempts: number };
      const listed = await until(
        'the subscription listed as needing attention',
        async () => ((await w.api.get('/issuance/attention', w.staff.token)).body?.data?.items ?? []) as Item[],
        (items) => items.some((i) => i.subscription_id === s.id),
      );
      const entry = listed.find((i) => i.subscription_id === s.id)!;
      expect(entry).toMatchObject({
        step: 'recordTransition',
        failure: 'RETRYING',
        sqlstate: '42501',
        status: 'pending_review',
      });
      expect(entry.failed_attempts).toBeGreaterThanOrEqual(5);
      // Staff only, and each organisation its own.
      expect((await w.api.get('/issuance/attention', w.investor.token)).status).toBe(403);
      const stranger = await actor(svc, newOrg(), ['staff']);
      expect((await w.api.get('/issuance/attention', stranger.token)).body.data.items).toEqual([]);
      // The console's page, linked from its navigation, reads the same list through the API.
      const page = await fetch(`${svc.baseUrl}/console/attention`, {
        headers: { cookie: `tranche_console=${await consoleToken(svc, w.staff)}` },
      });
      const text = await page.text();
      expect(page.status).toBe(200);
      expect(text).toContain('href="/console/attention" aria-current="page"');
      expect(text).toContain(`data-testid="attention-${s.id}"`);
      expect(text).toContain('<code>recordTransition</code>');
      // The API's metric counts it.
      const gauge = await registry.getSingleMetricAsString('tranche_subscriptions_needing_attention');
      expect(Number(gauge.trim().split('\n').pop()!.split(' ').pop())).toBeGreaterThanOrEqual(1);
      await asOwner('grant update on subscriptions to tranche_service');
      granted = true;
      await approving;
      await until(
        'the approval to land',
        async () => (await view(s.id)).status,
        (st) => st === 'approved',
      );
      const after = (await w.api.get('/issuance/attention', w.staff.token)).body.data.items;
      expect(after.some((i: { subscription_id: string }) => i.subscription_id === s.id)).toBe(false);
    } finally {
      if (!granted) await asOwner('grant update on subscriptions to tranche_service');
    }
  });
});
