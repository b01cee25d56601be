import { moneyTotals } from './receipts';
import { EXPIRES_UNSIGNED, type SubscriptionState } from './subscription';
import type { SubscriptionView } from './subscription-view-schema';

/** The subscription as the API returns it (spec §2.1): snake_case, money as strings. */
export type { SubscriptionView };

export function toSubscriptionView(s: SubscriptionState): SubscriptionView {
  const view: SubscriptionView = {
    id: s.id,
    offering_id: s.offeringId,
    security_class_id: s.securityClassId,
    investor_id: s.investorId,
    tranche_id: s.trancheId,
    units_subscribed: s.unitsSubscribed,
    price_per_unit: s.pricePerUnit,
    total_amount: s.totalAmount,
    currency: s.currency,
    payment_method: s.paymentMethod,
    payment_status: s.paymentStatus,
    subscription_agreement_signed: s.agreementSigned,
    status: s.status,
    signed_at: s.signedAt,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
  if (s.referenceCode) view.reference_code = s.referenceCode;
  if (s.statusReason) view.status_reason = s.statusReason;
  if (s.draftExpiresAt && EXPIRES_UNSIGNED.includes(s.status)) view.expires_at = s.draftExpiresAt;
  if (s.infoRequested) view.info_requested = s.infoRequested;
  const exchanges = s.infoExchanges ?? [];
  if (exchanges.length) {
    view.info_requests = exchanges.map((x) => ({
      message: x.message,
      requested_at: x.requestedAt,
      answer: x.answer
        ? {
            message: x.answer.message,
            document_references: x.answer.documentReferences,
            answered_at: x.answer.answeredAt,
          }
        : null,
    }));
  }
  // Beside each other once money was taken (docs/decisions/0284-refunds.md): a partial refund reads as one.
  const totals = moneyTotals(s);
  if (totals) {
    view.amount_received = totals.received;
    view.amount_refunded = totals.refunded;
  }
  if (s.set === 'B') {
    view.shares_id = s.sharesId;
    view.shares_issued_at = s.sharesIssuedAt;
  }
  return view;
}
