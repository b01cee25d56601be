import Router from '@koa/router';
import { OfferingSchema, type Offering } from '../../db/entities/offering';
import { SecurityClassSchema } from '../../db/entities/security-class';
import { TrancheSchema } from '../../db/entities/tranche';
import { notFound } from '../../lib/errors';
import { newId } from '../../lib/ids';
import { normaliseMoney } from '../../lib/money';
import type { Principal } from '../../domain/principal';
import type { ApiDeps } from '../deps';
import { auth, type AuthState } from '../middleware/auth';
import { validate } from '../middleware/validate';
import { OfferingParams } from './schema';
import { CreateOfferingBody, CreateSecurityClassBody, CreateTrancheBody, UpdateOfferingBody } from './offerings-schema';
import { offeringView, securityClassView, trancheView } from './offering-views';

/** Offerings, their security classes and tranches: staff create them, everyone in the org reads them. */
export function offeringsRouter(deps: ApiDeps): Router {
  const router = new Router({ prefix: '/issuance/offerings' });
  const anyone = auth(deps.tokens);
  const staff = auth(deps.tokens, 'staff', 'admin');
  const em = () => deps.orm.em;

  async function ownOffering(id: string, p: Principal): Promise<Offering> {
    const offering = await em().findOne(OfferingSchema, { id, orgId: p.orgId });
    if (!offering) throw notFound('Offering');
    return offering;
  }

  router.post('/', staff, validate({ body: CreateOfferingBody }, async (ctx, input) => {
    const now = new Date();
    const offering = em().create(OfferingSchema, {
      id: newId(),
      orgId: ctx.state.principal.orgId,
      ...input.body,
      raisedAmount: '0.00',
      investorCount: 0,
      createdAt: now,
      updatedAt: now,
    });
    await em().flush();
    ctx.status = 201;
    ctx.body = { success: true, data: offeringView(offering) };
  }));

  router.get('/', anyone, async (ctx) => {
    const { principal } = ctx.state as AuthState;
    const offerings = await em().find(OfferingSchema, { orgId: principal.orgId }, { orderBy: { createdAt: 'desc' }, limit: 200 });
    ctx.body = { success: true, data: offerings.map((o) => offeringView(o)) };
  });

  router.get('/:offering_id', anyone, validate({ params: OfferingParams }, async (ctx, input) => {
    const offering = await ownOffering(input.params.offering_id, ctx.state.principal);
    const [classes, tranches] = await Promise.all([
      em().find(SecurityClassSchema, { offeringId: offering.id }, { orderBy: { createdAt: 'asc' } }),
      em().find(TrancheSchema, { offeringId: offering.id }, { orderBy: { createdAt: 'asc' } }),
    ]);
    ctx.body = { success: true, data: offeringView(offering, classes, tranches) };
  }));

  router.patch('/:offering_id', staff, validate({ params: OfferingParams, body: UpdateOfferingBody }, async (ctx, input) => {
    const offering = await ownOffering(input.params.offering_id, ctx.state.principal);
    offering.status = input.body.status;
    offering.updatedAt = new Date();
    await em().flush();
    ctx.body = { success: true, data: offeringView(offering) };
  }));

  router.post('/:offering_id/security-classes', staff, validate({ params: OfferingParams, body: CreateSecurityClassBody }, async (ctx, input) => {
    const offering = await ownOffering(input.params.offering_id, ctx.state.principal);
    const { name, pricePerUnit } = input.body;
    const cls = em().create(SecurityClassSchema, { id: newId(), offeringId: offering.id, name, pricePerUnit: normaliseMoney(pricePerUnit), createdAt: new Date() });
    await em().flush();
    ctx.status = 201;
    ctx.body = { success: true, data: securityClassView(cls) };
  }));

  router.post('/:offering_id/tranches', staff, validate({ params: OfferingParams, body: CreateTrancheBody }, async (ctx, input) => {
    const offering = await ownOffering(input.params.offering_id, ctx.state.principal);
    const { name, pricePerUnit, status } = input.body;
    const tranche = em().create(TrancheSchema, {
      id: newId(),
      offeringId: offering.id,
      name,
      pricePerUnit: pricePerUnit ? normaliseMoney(pricePerUnit) : null,
      status,
      createdAt: new Date(),
    });
    await em().flush();
    ctx.status = 201;
    ctx.body = { success: true, data: trancheView(tranche) };
  }));

  return router;
}
