import type Router from '@koa/router';
import type { Knex } from '@mikro-orm/postgresql';
import { eraseInvestor, liftLegalHold, LegalHoldStands, placeLegalHold } from '../../db/personal-keys';
import { conflict, notFound } from '../../lib/errors';
import { recordingRefusals, recordSucceeded } from '../audit/audit-recorder';
import type { ApiDeps } from '../deps';
import { auth } from '../middleware/auth';
import { validate } from '../middleware/validate';
import { ok } from '../respond';
import { resealPersonalData } from '../personal/reseal';
import { ErasureView, LegalHoldBody, LegalHoldView, UserParams } from './schema';
import { cutToCodePoints } from '../../lib/text';

/**
 * An organisation's administrator erases an investor of that organisation by destroying their data
 * key, and places or lifts the legal hold that refuses it (docs/decisions/0313-erasure-by-crypto-shredding.md,
 * docs/decisions/0381-erasure-complete.md). Each is audited in the transaction that makes it; a refusal
 * is audited too.
 */
export function erasureRoutes(router: Router, deps: ApiDeps): void {
  const admin = auth(deps.tokens, 'admin');
  const knex = () => deps.orm.em.getConnection().getKnex();
  const subjectOf = (userId: string) => ({ type: 'user', id: userId });

  router.post(
    '/identity/users/:user_id/erase',
    admin,
    validate(
      {
        params: UserParams,
        response: ErasureView,
        summary:
          "Erase an investor's personal data by destroying their key (admin); refused 409 LEGAL_HOLD while a hold stands; 202 with what it could not reach when something of them is left in clear",
        alsoStatus: {
          status: 202,
          description: 'Erased, but not complete: `unreached` says what is still in clear, and where',
        },
      },
      async (ctx, input) => {
        const p = ctx.state.principal;
        const subject = subjectOf(input.params.user_id);
        const erased = await recordingRefusals(deps.orm, ctx, { action: 'investor.erase', subject }, () =>
          knex().transaction(async (trx: Knex.Transaction) => {
            const e = await eraseInvestor(trx, p.orgId, subject.id, p.userId).catch((err: unknown) => {
              if (err instanceof LegalHoldStands)
                throw conflict('LEGAL_HOLD', 'A legal hold stands on this investor: lift it before erasing');
              throw err;
            });
            if (e.now)
              await recordSucceeded(trx, ctx, {
                action: 'investor.erase',
                subject,
                after: { erased_at: new Date(e.erasedAt).toISOString(), keys_destroyed: e.keysDestroyed },
              });
            return e;
          }),
        );
        // Fields written in clear before sealing existed are not shredded with the key: put the erased
        // marker in their place, then say what is left (docs/decisions/0381-erasure-complete.md). A repeat
        // runs this again, so an erasure interrupted here is finished by repeating it.
        const { unreached } = await resealPersonalData(deps, { only: { orgId: p.orgId, userId: subject.id } });
        ok(
          ctx,
          {
            user_id: subject.id,
            erased_at: new Date(erased.erasedAt).toISOString(),
            erased_by: erased.erasedBy,
            keys_destroyed: erased.now ? erased.keysDestroyed : 0,
            complete: unreached.length === 0,
            unreached,
          },
          unreached.length === 0 ? 200 : 202,
        );
      },
    ),
  );

  router.post(
    '/identity/users/:user_id/legal-hold',
    admin,
    validate(
      {
        params: UserParams,
        body: LegalHoldBody,
        response: LegalHoldView,
        summary:
          "Place a legal hold on an investor's data, refusing its erasure until lifted (admin); a standing hold is kept as it is",
      },
      async (ctx, input) => {
        const p = ctx.state.principal;
        const subject = subjectOf(input.params.user_id);
        const hold = await knex().transaction(async (trx: Knex.Transaction) => {
          const h = await placeLegalHold(trx, p.orgId, subject.id, p.userId, input.body.reason);
          if (h.now)
            await recordSucceeded(trx, ctx, {
              action: 'investor.legal_hold.place',
              subject,
              after: { placed_at: new Date(h.placedAt).toISOString(), reason: cutToCodePoints(h.reason, 200) },
            });
          return h;
        });
        ok(ctx, {
          user_id: subject.id,
          placed_at: new Date(hold.placedAt).toISOString(),
          placed_by: hold.placedBy,
          reason: hold.reason,
        });
      },
    ),
  );

  router.delete(
    '/identity/users/:user_id/legal-hold',
    admin,
    validate(
      { params: UserParams, status: 204, summary: 'Lift the legal hold on an investor (admin); 404 when none stands' },
      async (ctx, input) => {
        const p = ctx.state.principal;
        const subject = subjectOf(input.params.user_id);
        await recordingRefusals(deps.orm, ctx, { action: 'investor.legal_hold.lift', subject }, () =>
          knex().transaction(async (trx: Knex.Transaction) => {
            const lifted = await liftLegalHold(trx, p.orgId, subject.id);
            if (!lifted) throw notFound('Legal hold');
            await recordSucceeded(trx, ctx, {
              action: 'investor.legal_hold.lift',
              subject,
              before: { placed_at: new Date(lifted.placedAt).toISOString(), placed_by: lifted.placedBy },
            });
          }),
        );
        ctx.status = 204;
      },
    ),
  );
}
