import Router from '@koa/router';
import type { FilterQuery } from '@mikro-orm/core';
import { OfferingSchema, type Offering } from '../../db/entities/offering';
import { SecurityClassSchema } from '../../db/entities/security-class';
import { TrancheSchema } from '../../db/entities/tranche';
import { notFound, validationFailed } from '../../lib/errors';
import { newId } from '../../lib/ids';
import { currencyPlaces, formatAmount, toMinor } from '../../lib/money';
import type { Principal } from '../../domain/principal';
import type { ApiDeps } from '../deps';
import { auth, type AuthState } from '../middleware/auth';
import { validate } from '../middleware/validate';
import { ok } from '../respond';
import { olderThan, page } from '../cursor';
import { OfferingParams } from './schema';
import {
  CreateOfferingBody,
  CreateSecurityClassBody,
  CreateTrancheBody,
  ListOfferingsQuery,
  OfferingList,
  OfferingView,
  SecurityClassView,
  TrancheView,
  UpdateOfferingBody,
} from './offerings-schema';
import { offeringView, securityClassView, trancheView } from './offering-views';

/** Offerings, their security classes and tranches: staff create them, everyone in the org reads them. */
export function offeringsRouter(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/issuance/offerings' });
  const anyone = auth(deps.tokens);
  const staff = auth(deps.tokens, 'staff', 'admin');
  const em = () => deps.orm.em;

  /** A price exact in the offering's currency, in its form ("12.5" USD -> "12.50"); a 422 otherwise. */
  function priceIn(offering: Pick<Offering, 'currency'>, price: string, path = 'pricePerUnit'): string {
    const minor = toMinor(price, offering.currency);
    if (minor === null) {
      const places = currencyPlaces(offering.currency);
      throw validationFailed([{ in: 'body', path, message: `${offering.currency} ${places}` }]);
    }
    return formatAmount(minor, offering.currency);
  }

  /** maxAmount, minInvestment (and an offering's maxPerInvestor) exact in the currency (decisions 0278, 0370). */
  function boundsIn(
    currency: string,
    b: { maxAmount?: string | null; minInvestment?: string | null; maxPerInvestor?: string | null },
  ): { maxAmount?: string | null; minInvestment?: string | null; maxPerInvestor?: string | null } {
    const out: { maxAmount?: string | null; minInvestment?: string | null; maxPerInvestor?: string | null } = {};
    if (b.maxAmount !== undefined) out.maxAmount = b.maxAmount && priceIn({ currency }, b.maxAmount, 'maxAmount');
    if (b.minInvestment !== undefined)
      out.minInvestment = b.minInvestment && priceIn({ currency }, b.minInvestment, 'minInvestment');
    if (b.maxPerInvestor !== undefined)
      out.maxPerInvestor = b.maxPerInvestor && priceIn({ currency }, b.maxPerInvestor, 'maxPerInvestor');
    return out;
  }
  /** A minimum no larger than the maximum, nor than the cap per investor: else nobody could subscribe. */
  function requireMinWithinMax(
    max: string | null | undefined,
    min: string | null | undefined,
    currency: string,
    perInvestor?: string | null,
  ) {
    if (max && min && toMinor(min, currency)! > toMinor(max, currency, 'total')!) {
      throw validationFailed([{ in: 'body', path: 'minInvestment', message: 'must not be more than maxAmount' }]);
    }
    if (perInvestor && min && toMinor(min, currency)! > toMinor(perInvestor, currency)!) {
      throw validationFailed([{ in: 'body', path: 'minInvestment', message: 'must not be more than maxPerInvestor' }]);
    }
  }

  async function ownOffering(id: string, p: Principal): Promise<Offering> {
    const offering = await em().findOne(OfferingSchema, { id, orgId: p.orgId });
    if (!offering) throw notFound('Offering');
    return offering;
  }

  router.post(
    '/',
    staff,
    validate(
      { body: CreateOfferingBody, response: OfferingView, status: 201, summary: 'Create an offering (staff)' },
      async (ctx, input) => {
        const now = new Date();
        const { maxAmount, minInvestment, maxPerInvestor, ...rest } = input.body;
        const bounds = boundsIn(rest.currency, { maxAmount, minInvestment, maxPerInvestor });
        requireMinWithinMax(bounds.maxAmount, bounds.minInvestment, rest.currency, bounds.maxPerInvestor);
        const offering = em().create(OfferingSchema, {
          id: newId(),
          orgId: ctx.state.principal.orgId,
          ...rest,
          maxAmount: bounds.maxAmount ?? null,
          minInvestment: bounds.minInvestment ?? null,
          maxPerInvestor: bounds.maxPerInvestor ?? null,
          committedAmount: '0',
          raisedAmount: '0.00',
          investorCount: 0,
          createdAt: now,
          updatedAt: now,
        });
        await em().flush();
        ok(ctx, offeringView(offering));
      },
    ),
  );

  router.get(
    '/',
    anyone,
    validate(
      { query: ListOfferingsQuery, response: OfferingList, summary: "List the organisation's offerings, newest first" },
      async (ctx, { query }) => {
        const { principal } = ctx.state as AuthState;
        const where: FilterQuery<Offering> = {
          orgId: principal.orgId,
          ...(query.cursor ? olderThan(query.cursor) : {}),
        };
        const rows = await em().find(OfferingSchema, where, {
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          limit: query.limit + 1,
        });
        const { items, next_cursor } = page(rows, query.limit, (o) => ({ at: o.createdAt, id: o.id }));
        ok(ctx, { items: items.map((o) => offeringView(o)), next_cursor });
      },
    ),
  );

  router.get(
    '/:offering_id',
    anyone,
    validate(
      {
        params: OfferingParams,
        response: OfferingView,
        summary: 'Get an offering with its security classes and tranches',
      },
      async (ctx, input) => {
        const offering = await ownOffering(input.params.offering_id, ctx.state.principal);
        const [classes, tranches] = await Promise.all([
          em().find(SecurityClassSchema, { offeringId: offering.id }, { orderBy: { createdAt: 'asc' } }),
          em().find(TrancheSchema, { offeringId: offering.id }, { orderBy: { createdAt: 'asc' } }),
        ]);
        ok(ctx, offeringView(offering, classes, tranches));
      },
    ),
  );

  router.patch(
    '/:offering_id',
    staff,
    validate(
      {
        params: OfferingParams,
        body: UpdateOfferingBody,
        response: OfferingView,
        summary: 'Open or close an offering, or set its maximum raise, minimum investment and cap per investor (staff)',
      },
      async (ctx, input) => {
        const offering = await ownOffering(input.params.offering_id, ctx.state.principal);
        const { status, ...given } = input.body;
        const bounds = boundsIn(offering.currency, given);
        requireMinWithinMax(
          bounds.maxAmount === undefined ? offering.maxAmount : bounds.maxAmount,
          bounds.minInvestment === undefined ? offering.minInvestment : bounds.minInvestment,
          offering.currency,
          bounds.maxPerInvestor === undefined ? offering.maxPerInvestor : bounds.maxPerInvestor,
        );
        // A maximum (or a cap per investor) below what is already committed refuses new subscriptions;
        // it cancels none (decisions 0278, 0370).
        if (status) offering.status = status;
        if (bounds.maxAmount !== undefined) offering.maxAmount = bounds.maxAmount;
        if (bounds.minInvestment !== undefined) offering.minInvestment = bounds.minInvestment;
        if (bounds.maxPerInvestor !== undefined) offering.maxPerInvestor = bounds.maxPerInvestor;
        offering.updatedAt = new Date();
        await em().flush();
        ok(ctx, offeringView(offering));
      },
    ),
  );

  router.post(
    '/:offering_id/security-classes',
    staff,
    validate(
      {
        params: OfferingParams,
        body: CreateSecurityClassBody,
        response: SecurityClassView,
        status: 201,
        summary: 'Add a security class to an offering (staff)',
      },
      async (ctx, input) => {
        const offering = await ownOffering(input.params.offering_id, ctx.state.principal);
        const { name, pricePerUnit, ...given } = input.body;
        const bounds = boundsIn(offering.currency, given);
        requireMinWithinMax(bounds.maxAmount, bounds.minInvestment, offering.currency);
        const cls = em().create(SecurityClassSchema, {
          id: newId(),
          offeringId: offering.id,
          name,
          pricePerUnit: priceIn(offering, pricePerUnit),
          maxAmount: bounds.maxAmount ?? null,
          minInvestment: bounds.minInvestment ?? null,
          committedAmount: '0',
          createdAt: new Date(),
        });
        await em().flush();
        ok(ctx, securityClassView(cls, offering.currency));
      },
    ),
  );

  router.post(
    '/:offering_id/tranches',
    staff,
    validate(
      {
        params: OfferingParams,
        body: CreateTrancheBody,
        response: TrancheView,
        status: 201,
        summary: 'Add a tranche to an offering (staff)',
      },
      async (ctx, input) => {
        const offering = await ownOffering(input.params.offering_id, ctx.state.principal);
        const { name, pricePerUnit, status } = input.body;
        const tranche = em().create(TrancheSchema, {
          id: newId(),
          offeringId: offering.id,
          name,
          pricePerUnit: pricePerUnit ? priceIn(offering, pricePerUnit) : null,
          status,
          createdAt: new Date(),
        });
        await em().flush();
        ok(ctx, trancheView(tranche, offering.currency));
      },
    ),
  );

  return router;
}
