import Router from '@koa/router';
import { conflict } from '../../lib/errors';
import { toSubscriptionView } from '../../domain/subscription-view';
import * as m from '../../domain/subscription-messages';
import type { ApiDeps } from '../deps';
import { authorize } from '../../domain/policy';
import { validate } from '../middleware/validate';
import { ok } from '../respond';
import { SubscriptionViewSchema as View } from '../../domain/subscription-view-schema';
import { legacyRequestHash, newSubscription } from './create-subscription';
import { reserveCapacity } from './capacity-rules';
import { releaseCommitment, releaseNeverStarted } from '../../db/offering-capacity';
import { logger } from '../../lib/runtime/logger';
import { draftTtlSeconds } from '../../lib/runtime/hold-windows';
import { pauseForTest } from '../../lib/runtime/test-pause';
import { paymentRoutes } from './payment-routes';
import { staffRoutes } from './staff-routes';
import { subscriptionKit } from './subscription-kit';
import {
  CreateSubscriptionBody,
  IdempotencyKey,
  ListSubscriptionsQuery,
  OfferingParams,
  ProvideInfoBody,
  SignAgreementBody,
  SubscriptionList,
  SubscriptionParams,
} from './schema';

/** spec §4.1, plus the staff operations the spec leaves unshown (docs/decisions/0009-staff-operations.md). */
export function subscriptionsRouter(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/issuance' });
  const kit = subscriptionKit(deps);
  const { set, reads, workflows, gate, may, seal, investorKey, command } = kit;

  router.post(
    '/offerings/:offering_id/subscriptions',
    may('create'),
    validate(
      {
        params: OfferingParams,
        body: CreateSubscriptionBody,
        response: View,
        status: 201,
        summary: 'Create a subscription (spec §4.1)',
      },
      async (ctx, input) => {
        const p = ctx.state.principal;
        authorize(p, 'create');
        const key = ctx.get('idempotency-key') || undefined;
        if (key !== undefined) IdempotencyKey.parse(key);
        const investor = await investorKey({ orgId: p.orgId, userId: p.userId });
        const made = await newSubscription(deps.orm, set, p, input.params.offering_id, input.body, key, investor);
        // Unsigned at this deadline, it is cancelled as expired (docs/decisions/0368-unsigned-drafts-expire.md).
        const lifetimeMs = draftTtlSeconds(deps.config) * 1000;
        const start = { ...made, draftExpiresAt: new Date(Date.parse(made.createdAt) + lifetimeMs).toISOString() };
        // Subscriptions created before request hashes were keyed carry the bare one: compared here only,
        // never sent to the workflow (its history would keep it).
        const legacyHash = key === undefined ? null : legacyRequestHash(input.params.offering_id, input.body);
        await gate(p, p.userId, start.orgId);
        // A key names one subscription for good: once it is recorded, the answer comes from the
        // record, even after Temporal's retention removed its workflow (a start would run it again).
        const earlier = key === undefined ? null : await reads.ifRecorded(start.id, p, 'read');
        if (!earlier) {
          // Held before the workflow starts, so the refusal is the create's own answer
          // (docs/decisions/0278-offering-capacity-reservations.md).
          await reserveCapacity(
            deps.orm,
            {
              subscriptionId: start.id,
              offeringId: start.offeringId,
              securityClassId: start.securityClassId,
              investorId: start.investorId,
              amount: start.totalAmount,
            },
            start.currency,
          );
          await pauseForTest(deps.config.TEST_PAUSE_AT, 'capacity-held');
        }
        const created = earlier ? null : await workflows.create(start).catch(releaseIfNeverStarted(start.id));
        if (created) return ok(ctx, created);
        // The workflow behind this key already ended: answer from the projection.
        const record = earlier ?? (await reads.authorized(start.id, p, 'read'));
        if (record.requestHash !== start.requestHash && record.requestHash !== legacyHash)
          throw conflict('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body');
        ok(ctx, toSubscriptionView(record.state));
      },
    ),
  );

  /**
   * A create whose workflow Temporal says it does not have gives its commitment back at once, and so
   * does one whose workflow answered that its first record was refused (the workflow gives it back too:
   * docs/decisions/0365-refused-create-ends-its-workflow.md). One whose outcome is unknown (Temporal
   * unreachable) keeps it for a retry with the same key, and the commitment sweep frees it once Temporal
   * says the workflow never started; a start still on its way when Temporal answered takes it back with
   * its first projection (docs/decisions/0371-commitment-sweep.md). The caller gets the create's own
   * error, whatever the release meets.
   */
  const releaseIfNeverStarted =
    (subscriptionId: string) =>
    async (err: unknown): Promise<never> => {
      try {
        const knex = deps.orm.em.getConnection().getKnex();
        if (workflows.recordedNothing(err)) await knex.transaction((trx) => releaseCommitment(trx, subscriptionId));
        else if (await workflows.neverStarted(subscriptionId)) await releaseNeverStarted(knex, subscriptionId);
      } catch (releaseErr) {
        logger.warn({ err: releaseErr, subscriptionId }, 'a failed create kept its commitment; the sweep frees it');
      }
      throw err;
    };

  router.get(
    '/subscriptions',
    may('read'),
    validate(
      {
        query: ListSubscriptionsQuery,
        response: SubscriptionList,
        summary: "List subscriptions: an investor's own, staff their organisation's",
      },
      async (ctx, input) => {
        ok(ctx, await reads.list(ctx.state.principal, input.query));
      },
    ),
  );

  router.get(
    '/subscriptions/:subscription_id',
    may('read'),
    validate({ params: SubscriptionParams, response: View, summary: 'Get one subscription' }, async (ctx, input) => {
      ok(
        ctx,
        toSubscriptionView((await reads.authorized(input.params.subscription_id, ctx.state.principal, 'read')).state),
      );
    }),
  );

  router.delete(
    '/subscriptions/:subscription_id',
    may('cancel'),
    validate(
      {
        params: SubscriptionParams,
        status: 204,
        summary: 'Cancel a subscription (draft, pending_signature or pending_payment)',
      },
      async (ctx, input) => {
        const record = await reads.authorized(input.params.subscription_id, ctx.state.principal, 'cancel');
        await workflows.command(record.id, m.cancel);
        ctx.status = 204;
      },
    ),
  );

  router.post(
    '/subscriptions/:subscription_id/request-signature',
    may('request_signature'),
    validate(
      { params: SubscriptionParams, response: View, summary: 'Present the agreement: draft to pending_signature' },
      command('request_signature', m.requestSignature, () => []),
    ),
  );

  router.post(
    '/subscriptions/:subscription_id/sign-agreement',
    may('sign'),
    validate(
      {
        params: SubscriptionParams,
        body: SignAgreementBody,
        response: View,
        summary: 'Sign the subscription agreement',
      },
      async (ctx, input) => {
        const record = await reads.authorized(input.params.subscription_id, ctx.state.principal, 'sign');
        await gate(ctx.state.principal, record.investorId, record.orgId);
        const { signedAt, ipAddress } = input.body;
        const owner = { orgId: record.orgId, userId: record.investorId };
        const [signature] = await seal(owner, [input.body.signature] as const);
        const [sealedIp] = ipAddress === undefined ? [null] : await seal(owner, [ipAddress] as const);
        ok(ctx, await workflows.command(record.id, m.signAgreement, { signature, signedAt, ipAddress: sealedIp }));
      },
    ),
  );

  router.post(
    '/subscriptions/:subscription_id/provide-info',
    may('provide_info'),
    validate(
      {
        params: SubscriptionParams,
        body: ProvideInfoBody,
        response: View,
        summary: "Answer staff's open information request (the investor who owns it)",
      },
      async (ctx, input) => {
        const record = await reads.authorized(input.params.subscription_id, ctx.state.principal, 'provide_info');
        const owner = { orgId: record.orgId, userId: record.investorId };
        const [message, ...documentReferences] = await seal(owner, [
          input.body.message,
          ...input.body.documentReferences,
        ]);
        ok(
          ctx,
          await workflows.command(record.id, m.provideInfo, {
            message: message!,
            documentReferences,
            actorId: ctx.state.principal.userId,
          }),
        );
      },
    ),
  );
  staffRoutes(router, kit);
  paymentRoutes(set, router, { may, workflows, reads });
  return router;
}
