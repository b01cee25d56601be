import { createHash } from 'node:crypto';
import type { Orm } from '../../db/orm';
import { OfferingSchema } from '../../db/entities/offering';
import { SecurityClassSchema } from '../../db/entities/security-class';
import { TrancheSchema } from '../../db/entities/tranche';
import { AppError, conflict, notFound, validationFailed } from '../../lib/errors';
import { newId, uuidFromName } from '../../lib/ids';
import { formatAmount, maxAmount, multiply, parseAmount } from '../../lib/money';
import type { BehaviourSet } from '../../lib/behaviour-set';
import type { Principal } from '../../domain/principal';
import type { NewSubscription } from '../../domain/subscription';
import type { CreateSubscriptionBody } from './schema';
import type { InvestorSealer } from '../personal/sealing';
import { ERASED } from '../../lib/personal-data';
import { requireMinimum } from './capacity-rules';

/**
 * Builds the new subscription from the offering's terms: price from the tranche or security
 * class, total computed exactly, currency from the offering. The id is derived from the
 * Idempotency-Key when one is given, so a replay reaches the same workflow. The investor's
 * self-reported accreditation is free text about them: sealed under their key before the workflow
 * sees it, and the request's hash is keyed under it too (docs/decisions/0381-erasure-complete.md).
 */
export async function newSubscription(
  orm: Orm,
  set: BehaviourSet,
  p: Principal,
  offeringId: string,
  body: CreateSubscriptionBody,
  idempotencyKey: string | undefined,
  investor: InvestorSealer,
): Promise<NewSubscription> {
  const em = orm.em.fork();
  const offering = await em.findOne(OfferingSchema, { id: offeringId, orgId: p.orgId });
  if (!offering) throw notFound('Offering');
  if (offering.status !== 'open') throw conflict('OFFERING_CLOSED', 'This offering is not accepting subscriptions');
  const cls = await em.findOne(SecurityClassSchema, { id: body.securityClassId, offeringId });
  if (!cls)
    throw validationFailed([
      { in: 'body', path: 'securityClassId', message: 'no such security class in this offering' },
    ]);
  let price = cls.pricePerUnit;
  if (body.trancheId) {
    const tranche = await em.findOne(TrancheSchema, { id: body.trancheId, offeringId });
    if (!tranche)
      throw validationFailed([{ in: 'body', path: 'trancheId', message: 'no such tranche in this offering' }]);
    if (tranche.status !== 'open') throw conflict('TRANCHE_CLOSED', 'This tranche is not accepting subscriptions');
    price = tranche.pricePerUnit ?? price;
  }
  const { currency } = offering;
  const priceMinor = parseAmount(price, currency);
  const totalMinor = multiply(priceMinor, body.unitsSubscribed);
  // A total that rounds to nothing would complete with no money moved.
  if (totalMinor <= 0n) {
    throw new AppError(
      422,
      'AMOUNT_TOO_SMALL',
      `${body.unitsSubscribed} units at ${formatAmount(priceMinor, currency)} ${currency} come to less than the smallest ${currency} amount`,
      { price_per_unit: formatAmount(priceMinor, currency), currency },
    );
  }
  // Refused here, or the projection could never store it and the workflow would retry forever.
  const max = maxAmount(currency);
  if (totalMinor > max) {
    throw new AppError(422, 'AMOUNT_TOO_LARGE', `The total would exceed ${formatAmount(max, currency)}`, {
      max_total_amount: formatAmount(max, currency),
    });
  }
  requireMinimum(offering, cls, totalMinor);
  return {
    id: idempotencyKey ? uuidFromName('subscription', p.orgId, p.userId, idempotencyKey) : newId(),
    set,
    orgId: p.orgId,
    offeringId,
    securityClassId: cls.id,
    trancheId: body.trancheId ?? null,
    investorId: p.userId,
    unitsSubscribed: body.unitsSubscribed,
    pricePerUnit: formatAmount(priceMinor, currency),
    totalAmount: formatAmount(totalMinor, currency),
    currency,
    paymentMethod: body.paymentMethod ?? null,
    accreditationStatus: body.accreditationStatus === undefined ? null : investor.seal(body.accreditationStatus),
    suitabilityConfirmed: body.suitabilityConfirmed ?? null,
    riskAcknowledgmentSigned: body.riskAcknowledgmentSigned ?? null,
    requestHash: idempotencyKey ? requestHash(offeringId, body, investor) : null,
    createdAt: new Date().toISOString(),
  };
}

/** Key order does not matter; any change of value does. */
const canonicalRequest = (offeringId: string, body: CreateSubscriptionBody) =>
  JSON.stringify([offeringId, Object.entries(body).sort(([a], [b]) => a.localeCompare(b))]);

/**
 * Keyed under the investor's key, so the self-reported accreditation cannot be guessed back from the
 * hash kept in the projection and the history. An erased investor's is kept as the erased marker:
 * their request is hashed with the marker in its place, and nothing personal is in it.
 */
function requestHash(offeringId: string, body: CreateSubscriptionBody, investor: InvestorSealer): string {
  if (!investor.erased) return investor.hash(canonicalRequest(offeringId, body));
  return legacyRequestHash(
    offeringId,
    body.accreditationStatus === undefined ? body : { ...body, accreditationStatus: ERASED },
  );
}

/** The bare hash subscriptions created before keyed hashes carry: a replay of one still matches it. */
export function legacyRequestHash(offeringId: string, body: CreateSubscriptionBody): string {
  return createHash('sha256').update(canonicalRequest(offeringId, body)).digest('hex');
}
