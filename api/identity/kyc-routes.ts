import type Router from '@koa/router';
import { authorizeInOrganisation, organisationRoles, seesWholeOrganisation, type Subject } from '../../domain/policy';
import { notFound } from '../../lib/errors';
import { decisionAfter, recordingRefusals, recordSucceeded } from '../audit/audit-recorder';
import type { ApiDeps } from '../deps';
import { auth } from '../middleware/auth';
import { validate } from '../middleware/validate';
import { commitIdentityChange, type KycModel } from '../../identity';
import { ok } from '../respond';
import { kycDecisionBody, RecordParams, SubjectQuery, KycCaseView, KycSessionView } from './schema';

/** Investors start their own KYC; staff read and decide the KYC records of their organisation. */
export function kycRoutes(router: Router, deps: ApiDeps, model: KycModel): void {
  const investor = auth(deps.tokens, 'investor');
  const staff = auth(deps.tokens, ...organisationRoles('decide_kyc'));
  const anyone = auth(deps.tokens);
  const view = deps.config.BEHAVIOUR_SET === 'A' ? KycCaseView : KycSessionView;

  router.post(
    '/identity/kyc',
    investor,
    validate(
      { response: view, status: 201, summary: 'Start (or restart) KYC verification for the caller' },
      async (ctx) => {
        const { orgId, userId } = ctx.state.principal;
        ok(ctx, await commitIdentityChange(deps, { orgId, userId }, (em) => model.start(em, orgId, userId)));
      },
    ),
  );

  router.get(
    '/identity/kyc',
    anyone,
    validate(
      {
        query: SubjectQuery,
        response: view,
        summary: "Get the caller's KYC record (staff: any user's of the organisation)",
      },
      async (ctx, input) => {
        const p = ctx.state.principal;
        // Investors read only their own record, whatever user_id they pass.
        const userId = seesWholeOrganisation(p) && input.query.user_id ? input.query.user_id : p.userId;
        const record = await model.current(deps.orm.em.fork(), p.orgId, userId);
        if (!record) throw notFound('KYC record');
        ok(ctx, record);
      },
    ),
  );

  router.post(
    '/identity/kyc/:id/decisions',
    staff,
    validate(
      {
        params: RecordParams,
        body: kycDecisionBody(model.actions),
        response: view,
        summary: 'Decide a KYC record (staff)',
      },
      async (ctx, input) => {
        const p = ctx.state.principal;
        const target = {
          id: input.params.id,
          orgId: p.orgId,
          allow: (subject: Subject) => authorizeInOrganisation(p, 'decide_kyc', subject),
        };
        const spec = { action: `kyc.${input.body.action}`, subject: { type: 'kyc', id: input.params.id } };
        const decided = await recordingRefusals(deps.orm, ctx, spec, () =>
          commitIdentityChange(
            deps,
            null,
            (em) => model.apply(em, target, input.body.action, 'staff', input.body.reason),
            (trx, result) => recordSucceeded(trx, ctx, { ...spec, after: decisionAfter(result, input.body.reason) }),
          ),
        );
        ok(ctx, decided);
      },
    ),
  );
}
