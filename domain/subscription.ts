/**
 * The subscription as both the API and the workflow see it (spec §2.1–§2.4). Pure data and
 * constants only: this module is bundled into workflow code, so it must stay free of I/O.
 */
import type { BehaviourSet } from '../lib/behaviour-set';

export const SUBSCRIPTION_STATUSES = [
  'draft',
  'pending_signature',
  'pending_payment',
  'pending_review',
  'approved',
  'rejected',
  'cancelled',
  'voided',
  'completed',
] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const PAYMENT_STATUSES = [
  'pending',
  'processing',
  'received',
  'in_escrow',
  'failed',
  'refunded',
  'disputed',
] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** spec §2.4: at creation and, in Set B, at checkout. */
export const PAYMENT_METHODS = ['card', 'us_bank_account', 'crypto', 'wire', 'other'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];
/** spec §2.4: Set A setup sessions. */
export const SETUP_PAYMENT_METHODS = ['card', 'us_bank_account'] as const;
/** spec §2.4: Set A submit-for-review without a linked method. */
export const OFFLINE_PAYMENT_METHODS = ['wire', 'check'] as const;
export type OfflinePaymentMethod = (typeof OFFLINE_PAYMENT_METHODS)[number];

/** spec §2.2: the investor may cancel only from these. */
export const CANCELLABLE: readonly SubscriptionStatus[] = ['draft', 'pending_signature', 'pending_payment'];
/**
 * Unsigned: the draft's clock runs here, and a subscription still here at its deadline is cancelled
 * as expired (docs/decisions/0368-unsigned-drafts-expire.md). A signature stops it.
 */
export const EXPIRES_UNSIGNED: readonly SubscriptionStatus[] = ['draft', 'pending_signature'];
export const TERMINAL: readonly SubscriptionStatus[] = ['rejected', 'cancelled', 'voided', 'completed'];
/** Ended without being fulfilled: open processor sessions are closed, and money arriving later is held. */
export const CLOSES_SESSIONS: readonly SubscriptionStatus[] = ['rejected', 'cancelled', 'voided'];

/**
 * One information request and its answer (docs/decisions/0277-answering-an-information-request.md):
 * staff may ask again, so every request and answer is kept, oldest first.
 */
export interface InfoExchange {
  message: string;
  requestedAt: string;
  requestedBy: string | null;
  answer: InfoAnswer | null;
}
interface InfoAnswer {
  message: string;
  /** References to documents the investor already holds elsewhere (ids or URLs); never fetched by us. */
  documentReferences: string[];
  answeredAt: string;
  answeredBy: string;
}

/** Everything the workflow knows about one subscription. Money travels as decimal strings in the currency's minor unit (lib/money). */
export interface SubscriptionState {
  id: string;
  set: BehaviourSet;
  orgId: string;
  offeringId: string;
  securityClassId: string;
  trancheId: string | null;
  investorId: string;
  unitsSubscribed: number;
  pricePerUnit: string;
  totalAmount: string;
  currency: string;
  /** Method chosen at creation, or later by setup, checkout or submit-for-review. */
  paymentMethod: PaymentMethod | OfflinePaymentMethod | null;
  paymentStatus: PaymentStatus;
  status: SubscriptionStatus;
  accreditationStatus: string | null;
  suitabilityConfirmed: boolean | null;
  riskAcknowledgmentSigned: boolean | null;
  agreementSigned: boolean;
  signature: string | null;
  signedAt: string | null;
  signerIp: string | null;
  /** Set A: the processor's session and the payment method it linked. */
  setupSessionId: string | null;
  paymentMethodLinked: boolean;
  /** Set A: how many times staff asked to collect again; part of the processor's idempotency key. */
  collectionAttempts: number;
  /** Set B: the latest checkout session. */
  checkoutSessionId: string | null;
  /** The payment that paid the total (PaymentNotification.payment); absent before payments were compared. */
  paidWith?: string | null;
  /** Payments held for staff to refund (a second payment, a wrong amount), so a repeat is held once. */
  heldPayments?: string[];
  /**
   * Every payment taken for the subscription with what went back of it (docs/decisions/0284-refunds.md);
   * absent in states from before refunds were recorded (workflows/subscription-refunds.ts derives it).
   */
  receipts?: Receipt[];
  /** How many refunds staff asked for: part of the processor's idempotency key of the next one. */
  refundsRequested?: number;
  /** The payment status a dispute interrupted, restored when the dispute is won (docs/decisions/0285-dispute-outcomes.md). */
  statusBeforeDispute?: PaymentStatus | null;
  referenceCode: string | null;
  sharesId: string | null;
  sharesIssuedAt: string | null;
  /** Why staff rejected, voided or asked for more (not shown in the spec; kept for the record). */
  statusReason: string | null;
  /** The open request's message; null once answered (or never asked). */
  infoRequested: string | null;
  /** Every request and answer; absent in states from before answers, where only `infoRequested` was kept. */
  infoExchanges?: InfoExchange[];
  createdAt: string;
  updatedAt: string;
  /**
   * When it is cancelled as expired if still unsigned (docs/decisions/0368-unsigned-drafts-expire.md):
   * creation plus SUBSCRIPTION_DRAFT_TTL. Absent in subscriptions created before drafts expired.
   */
  draftExpiresAt?: string | null;
  /** Hash of the create request body, for Idempotency-Key replays. */
  requestHash: string | null;
  /** Bumped on every change; the projection applies a write only if it is newer. */
  version: number;
  /** The `sequence` of the last event this subscription published (absent before any was numbered). */
  eventSequence?: number;
}

/** One payment taken: its processor id, what it brought, and what went back (refunds, a lost dispute). */
export interface Receipt {
  payment: string;
  amount: string;
  refunded: string;
  /** Held aside (a second payment, a wrong amount): never the subscription's own payment. */
  held: boolean;
  disputed?: boolean;
}

/** What the create command carries into the workflow; the workflow derives the rest. */
export type NewSubscription = Pick<
  SubscriptionState,
  | 'id'
  | 'set'
  | 'orgId'
  | 'offeringId'
  | 'securityClassId'
  | 'trancheId'
  | 'investorId'
  | 'unitsSubscribed'
  | 'pricePerUnit'
  | 'totalAmount'
  | 'currency'
  | 'accreditationStatus'
  | 'suitabilityConfirmed'
  | 'riskAcknowledgmentSigned'
  | 'requestHash'
  | 'createdAt'
  | 'draftExpiresAt'
> & { paymentMethod: PaymentMethod | null };

export const subscriptionWorkflowId = (subscriptionId: string) => `subscription-${subscriptionId}`;
/** The subscription a workflow id names (the inverse of subscriptionWorkflowId), or null for any other id. */
export const subscriptionIdOfWorkflow = (workflowId: string | undefined): string | null =>
  workflowId?.startsWith('subscription-') ? workflowId.slice('subscription-'.length) : null;
