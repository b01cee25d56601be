import type Router from '@koa/router';
import type { Principal } from '../../domain/principal';
import { authorizeInOrganisation, organisationRoles, seesWholeOrganisation, type Subject } from '../../domain/policy';
import { notFound } from '../../lib/errors';
import { decisionAfter, recordingRefusals, recordSucceeded } from '../audit/audit-recorder';
import type { ApiDeps } from '../deps';
import { auth } from '../middleware/auth';
import { validate } from '../middleware/validate';
import { commitIdentityChange, type accreditations } from '../../identity';
import { ok } from '../respond';
import { personalSealer } from '../personal/sealing';
import {
  AccreditationDecisionBody,
  AccreditationDocumentBody,
  CreateAccreditationBody,
  RecordParams,
  SubjectQuery,
  AccreditationList,
  AccreditationView,
} from './schema';

const owner = (p: Principal) => ({ orgId: p.orgId, userId: p.userId });

/** Investors create, document and submit their accreditation; staff read and decide within their organisation. */
export function accreditationRoutes(router: Router, deps: ApiDeps, records: ReturnType<typeof accreditations>): void {
  const investor = auth(deps.tokens, 'investor');
  const seal = personalSealer(deps);
  const staff = auth(deps.tokens, ...organisationRoles('decide_accreditation'));
  const anyone = auth(deps.tokens);

  router.post(
    '/identity/accreditations',
    investor,
    validate(
      {
        body: CreateAccreditationBody,
        response: AccreditationView,
        status: 201,
        summary: 'Start an accreditation (investor)',
      },
      async (ctx, input) => {
        const p = ctx.state.principal;
        ok(ctx, await commitIdentityChange(deps, owner(p), (em) => records.create(em, owner(p), input.body.method)));
      },
    ),
  );

  router.get(
    '/identity/accreditations',
    anyone,
    validate(
      {
        query: SubjectQuery,
        response: AccreditationList,
        summary: "List the caller's accreditations (staff: any user's)",
      },
      async (ctx, input) => {
        const p = ctx.state.principal;
        const userId = seesWholeOrganisation(p) && input.query.user_id ? input.query.user_id : p.userId;
        ok(ctx, await records.list(deps.orm.em.fork(), p.orgId, userId));
      },
    ),
  );

  router.get(
    '/identity/accreditations/:id',
    anyone,
    validate(
      { params: RecordParams, response: AccreditationView, summary: 'Get one accreditation' },
      async (ctx, input) => {
        const p = ctx.state.principal;
        const a = await records.get(deps.orm.em.fork(), input.params.id, p.orgId);
        if (!seesWholeOrganisation(p) && a.userId !== p.userId) throw notFound('Accreditation');
        ok(ctx, records.view(a));
      },
    ),
  );

  router.post(
    '/identity/accreditations/:id/documents',
    investor,
    validate(
      {
        params: RecordParams,
        body: AccreditationDocumentBody,
        response: AccreditationView,
        status: 201,
        summary: "Record a document's metadata on an accreditation (investor)",
      },
      async (ctx, input) => {
        const p = ctx.state.principal;
        // A file name often names its person: kept sealed under the investor's key (decision 0313).
        const [fileName] = await seal(owner(p), [input.body.file_name] as const);
        ok(
          ctx,
          await commitIdentityChange(deps, null, (em) =>
            records.addDocument(em, input.params.id, owner(p), { ...input.body, file_name: fileName }),
          ),
        );
      },
    ),
  );

  router.post(
    '/identity/accreditations/:id/submit',
    investor,
    validate(
      { params: RecordParams, response: AccreditationView, summary: 'Submit an accreditation for review (investor)' },
      async (ctx, input) => {
        const p = ctx.state.principal;
        ok(ctx, await commitIdentityChange(deps, null, (em) => records.submit(em, input.params.id, owner(p))));
      },
    ),
  );

  router.post(
    '/identity/accreditations/:id/decisions',
    staff,
    validate(
      {
        params: RecordParams,
        body: AccreditationDecisionBody,
        response: AccreditationView,
        summary: 'Decide an accreditation (staff)',
      },
      async (ctx, input) => {
        const p = ctx.state.principal;
        const target = {
          id: input.params.id,
          orgId: p.orgId,
          allow: (subject: Subject) => authorizeInOrganisation(p, 'decide_accreditation', subject),
        };
        const spec = {
          action: `accreditation.${input.body.action}`,
          subject: { type: 'accreditation', id: input.params.id },
        };
        const decided = await recordingRefusals(deps.orm, ctx, spec, () =>
          commitIdentityChange(
            deps,
            null,
            (em) => records.decide(em, target, input.body.action, 'staff', input.body.reason),
            (trx, result) => recordSucceeded(trx, ctx, { ...spec, after: decisionAfter(result, input.body.reason) }),
          ),
        );
        ok(ctx, decided);
      },
    ),
  );
}
