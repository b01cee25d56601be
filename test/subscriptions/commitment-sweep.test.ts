import { randomUUID } from 'node:crypto';
import { TypedSearchAttributes } from '@temporalio/common';
import { holdCommitment, releaseCommitment, releaseNeverStarted } from '../../db/offering-capacity';
import { subscriptionWorkflowId } from '../../domain/subscription';
import { getSubscription } from '../../domain/subscription-messages';
import { OfferingIdKey, SubscriptionStatusKey } from '../../domain/search-attributes';
import type { CommitmentSweepResult } from '../../domain/commitment-sweep';
import {
  actor,
  approveKyc,
  createOffering,
  createSubscription,
  newOrg,
  newSubscription,
  type Actor,
} from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { until } from '../support/wait';

/**
 * The commitment sweep and the holds it relies on (docs/decisions/0371-commitment-sweep.md): a
 * commitment given back because its workflow never started is taken again by a retried create or a
 * late start, never one given back because its subscription ended; the sweep frees only commitments
 * Temporal knows no workflow for, and wakes unsigned drafts of older releases, which then expire
 * (docs/decisions/0368-unsigned-drafts-expire.md).
 */
describe('the commitment sweep', () => {
  let svc: TestService;
  let api: ReturnType<typeof http>;
  let staff: Actor;
  let investor: Actor;

  beforeAll(async () => {
    svc = await startService({
      set: 'A',
      env: { COMMAND_TIMEOUT_MS: '5000', COMMITMENT_SWEEP_GRACE_SECONDS: '6', SUBSCRIPTION_DRAFT_TTL_DAYS: '14' },
    });
    api = http(svc.baseUrl);
    const org = newOrg();
    staff = await actor(svc, org, ['staff']);
    investor = await actor(svc, org, ['investor'], { kycCompleted: true });
    await approveKyc(svc, investor);
  }, 120_000);
  afterAll(() => svc?.stop());

  const knex = () => svc.orm.em.getConnection().getKnex();
  const capped = () =>
    createOffering(api, staff.token, {
      offering: { name: 'Swept', maxAmount: '100.00' },
      securityClass: { name: 'Common', pricePerUnit: '10.00' },
    });
  const committed = async (offeringId: string) =>
    (await api.get(`/issuance/offerings/${offeringId}`, staff.token)).body.data.committed_amount as string;
  const commitment = (ids: { offeringId: string; securityClassId: string }, amount: string) => ({
    subscriptionId: randomUUID(),
    offeringId: ids.offeringId,
    securityClassId: ids.securityClassId,
    investorId: investor.userId,
    amount,
  });
  /** Older than the sweep's grace period, as a create that stopped long ago. */
  const age = (subscriptionId: string) =>
    knex()('offering_commitments')
      .where({ subscription_id: subscriptionId })
      .update({ created_at: knex().raw(`now() - interval '1 hour'`) });
  const sweep = () =>
    svc.temporal.workflow.execute<() => Promise<CommitmentSweepResult>>('commitmentSweepWorkflow', {
      workflowId: `sweep-${randomUUID()}`,
      taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
    });

  it('holds a commitment given back as never started again on a retry, and one given back as ended never', async () => {
    const ids = await capped();
    const c = commitment(ids, '40.00');
    expect(await holdCommitment(knex(), c)).toBeNull();
    expect(await releaseNeverStarted(knex(), c.subscriptionId)).toEqual({
      offeringId: ids.offeringId,
      amount: '40.0000',
    });
    expect(await committed(ids.offeringId)).toBe('0.00');
    // The retried create (same Idempotency-Key, same subscription id): held again, within the bounds.
    expect(await holdCommitment(knex(), { ...c, amount: '100.00' })).toBeNull();
    expect(await committed(ids.offeringId)).toBe('100.00');
    expect(await holdCommitment(knex(), commitment(ids, '0.01'))).toMatchObject({ bound: 'offering' });

    const ended = commitment(ids, '10.00');
    await releaseCommitment(knex(), c.subscriptionId);
    expect(await holdCommitment(knex(), ended)).toBeNull();
    await releaseCommitment(knex(), ended.subscriptionId);
    expect(await holdCommitment(knex(), ended)).toBeNull();
    expect(await committed(ids.offeringId)).toBe('0.00');
  });

  it('frees a stranded commitment, keeps one whose workflow Temporal knows, and leaves recorded subscriptions alone', async () => {
    const ids = await capped();
    const live = (await createSubscription(api, investor.token, ids, { unitsSubscribed: 2 })).body.data;
    const stranded = commitment(ids, '30.00');
    const starting = commitment(ids, '10.00');
    for (const c of [stranded, starting]) expect(await holdCommitment(knex(), c)).toBeNull();
    // A workflow Temporal knows but no worker has projected yet (its queue has none).
    await svc.temporal.workflow.start('subscriptionWorkflow', {
      workflowId: subscriptionWorkflowId(starting.subscriptionId),
      taskQueue: `no-worker-${randomUUID()}`,
      args: [{ start: newSubscription({ id: starting.subscriptionId, ...ids, totalAmount: '10.00' }) }],
      typedSearchAttributes: new TypedSearchAttributes([
        { key: SubscriptionStatusKey, value: 'draft' },
        { key: OfferingIdKey, value: ids.offeringId },
      ]),
    });
    for (const id of [live.id, stranded.subscriptionId, starting.subscriptionId]) await age(id);
    expect(await committed(ids.offeringId)).toBe('60.00');

    const result = await sweep();
    expect(result.released).toContainEqual({
      subscriptionId: stranded.subscriptionId,
      offeringId: ids.offeringId,
      amount: '30.0000',
    });
    expect(result.released.map((r) => r.subscriptionId)).not.toContain(starting.subscriptionId);
    expect(await committed(ids.offeringId)).toBe('30.00');
    // The late start's first projection would find its commitment held; here it is given up by hand.
    await svc.temporal.workflow.getHandle(subscriptionWorkflowId(starting.subscriptionId)).terminate('test done');
  });

  it('lets a start that landed after its commitment was given back take it again with its first projection', async () => {
    const ids = await capped();
    const c = commitment(ids, '50.00');
    expect(await holdCommitment(knex(), c)).toBeNull();
    expect(await releaseNeverStarted(knex(), c.subscriptionId)).not.toBeNull();
    expect(await committed(ids.offeringId)).toBe('0.00');
    // The start arrives now, late: the worker projects it and the commitment is held again.
    const handle = await svc.temporal.workflow.start('subscriptionWorkflow', {
      workflowId: subscriptionWorkflowId(c.subscriptionId),
      taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
      args: [{ start: newSubscription({ id: c.subscriptionId, ...ids, totalAmount: '50.00' }) }],
      typedSearchAttributes: new TypedSearchAttributes([
        { key: SubscriptionStatusKey, value: 'draft' },
        { key: OfferingIdKey, value: ids.offeringId },
      ]),
    });
    await until(
      'the late start projected',
      () => handle.query(getSubscription),
      (s) => s.version >= 1,
    );
    expect(await committed(ids.offeringId)).toBe('50.00');
    const [row] = await knex()('offering_commitments').where({ subscription_id: c.subscriptionId });
    expect(row).toMatchObject({ released_at: null, released_because: null });
    await handle.terminate('test done');
  });

  it('wakes a draft created before drafts expired, which then expires and gives its capacity back', async () => {
    const ids = await capped();
    // As an older release started it: no deadline in its input.
    const start = newSubscription({ ...ids, investorId: investor.userId, orgId: investor.orgId, totalAmount: '70.00' });
    expect(await holdCommitment(knex(), { ...commitment(ids, '70.00'), subscriptionId: start.id })).toBeNull();
    const handle = await svc.temporal.workflow.start('subscriptionWorkflow', {
      workflowId: subscriptionWorkflowId(start.id),
      taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
      args: [{ start }],
      typedSearchAttributes: new TypedSearchAttributes([
        { key: SubscriptionStatusKey, value: 'draft' },
        { key: OfferingIdKey, value: ids.offeringId },
      ]),
    });
    await until(
      'the old draft projected',
      () => handle.query(getSubscription),
      (s) => s.version >= 1,
    );
    // Created 15 days ago, past the 14-day lifetime.
    await knex()('subscriptions')
      .where({ id: start.id })
      .update({ created_at: knex().raw(`now() - interval '15 days'`) });
    expect(await committed(ids.offeringId)).toBe('70.00');

    const result = await sweep();
    expect(result.draftsWoken).toBeGreaterThanOrEqual(1);
    const ended = await until(
      'the old draft to expire',
      () => handle.query(getSubscription),
      (s) => s.status === 'cancelled',
    );
    expect(ended).toMatchObject({ status: 'cancelled', statusReason: 'expired' });
    expect(await committed(ids.offeringId)).toBe('0.00');
    await handle.terminate('test done');
  });
});
