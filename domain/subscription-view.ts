import type { SubscriptionState } from './subscription';

/** The subscription as the API returns it (spec §2.1): snake_case, money as strings. */
export interface SubscriptionView {
  id: string;
  offering_id: string;
  security_class_id: string;
  tranche_id: string | null;
  units_subscribed: number;
  price_per_unit: string;
  total_amount: string;
  currency: string;
  payment_method: string | null;
  payment_status: string;
  subscription_agreement_signed: boolean;
  status: string;
  signed_at: string | null;
  created_at: string;
  updated_at: string;
  reference_code?: string | null;
  shares_id?: string | null;
  shares_issued_at?: string | null;
  status_reason?: string | null;
  info_requested?: string | null;
}

export function toSubscriptionView(s: SubscriptionState): SubscriptionView {
  const view: SubscriptionView = {
    id: s.id,
    offering_id: s.offeringId,
    security_class_id: s.securityClassId,
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
  if (s.infoRequested) view.info_requested = s.infoRequested;
  if (s.set === 'B') {
    view.shares_id = s.sharesId;
    view.shares_issued_at = s.sharesIssuedAt;
  }
  return view;
}
