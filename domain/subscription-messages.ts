/**
 * The subscription workflow's messages. The API imports this module (not the workflow code) to
 * send commands: updates for what can be refused, signals for processor notifications, a query
 * for reads.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { NewSubscription, OfflinePaymentMethod, PaymentMethod, SubscriptionState } from './subscription';
import type { SubscriptionView } from './subscription-view';
import type { PersonalFields } from './personal-fields';

export interface SignAgreementInput {
  signature: string;
  signedAt: string;
  ipAddress: string | null;
}
export interface SessionInput {
  paymentMethod: PaymentMethod;
  successUrl: string;
  cancelUrl: string;
}
export interface SessionView {
  session_id: string;
  session_url: string;
}
export interface SubmitForReviewInput {
  paymentMethod?: OfflinePaymentMethod;
}
export interface ReasonInput {
  reason: string;
  actorId: string;
}
export interface ProvideInfoInput {
  message: string;
  documentReferences: string[];
  actorId: string;
}
export interface ReconcileInput {
  amount: string;
  actorId: string;
}
/** Staff send money back (docs/decisions/0284-refunds.md); no amount means everything refundable. */
export interface RefundInput {
  amount?: string;
  reason: string;
  actorId: string;
  /** The staff request's Idempotency-Key, kept on its refund intents (absent in updates sent before it was). */
  requestKey?: string;
}
/** A processor's notification, already verified by the API and deduplicated by its event id. */
export interface PaymentNotification {
  /**
   * `refunded` carries the payment's whole refunded amount so far (partial or full), `dispute_won`
   * and `dispute_lost` how a dispute closed (docs/decisions/0285-dispute-outcomes.md).
   */
  kind: 'processing' | 'succeeded' | 'failed' | 'in_escrow' | 'refunded' | 'disputed' | 'dispute_won' | 'dispute_lost';
  processorEventId: string;
  /** The checkout or setup session, or the collection the notification is about. */
  reference: string | null;
  /**
   * The money movement itself, the same in every notification about one payment (Stripe's
   * PaymentIntent, the sandbox's session or collection): a second payment has another. Absent in
   * notifications read before it was added.
   */
  payment?: string | null;
  amount: string | null;
  failureReason?: string | null;
  /** The request that brought it, for the audit entry of a change it causes. Absent in notifications sent before it was added. */
  receivedVia?: NotificationReceipt;
}
/** Which processor's notification request the API took a notification from, and where it came from. */
export interface NotificationReceipt {
  processor: string;
  requestId: string | null;
  clientAddress: string | null;
}

/** Answers once the new subscription is projected; refuses a replayed key with another body. */
export const created = defineUpdate<SubscriptionView, [{ requestHash: string | null }]>('created');
export const requestSignature = defineUpdate<SubscriptionView, []>('requestSignature');
export const signAgreement = defineUpdate<SubscriptionView, [SignAgreementInput]>('signAgreement');
export const createSetupSession = defineUpdate<SessionView, [SessionInput]>('createSetupSession');
export const finalizeSetup = defineUpdate<SubscriptionView, []>('finalizeSetup');
export const submitForReview = defineUpdate<SubscriptionView, [SubmitForReviewInput]>('submitForReview');
export const createCheckoutSession = defineUpdate<SessionView, [SessionInput]>('createCheckoutSession');
export const cancel = defineUpdate<SubscriptionView, []>('cancel');
/** Staff or an admin end it before review, with a reason (docs/decisions/0369-staff-cancel-before-review.md). */
export const cancelByStaff = defineUpdate<SubscriptionView, [ReasonInput]>('cancelByStaff');
export const approve = defineUpdate<SubscriptionView, [{ actorId: string }]>('approve');
export const reject = defineUpdate<SubscriptionView, [ReasonInput]>('reject');
export const voidAgreement = defineUpdate<SubscriptionView, [ReasonInput]>('voidAgreement');
export const requestInfo = defineUpdate<SubscriptionView, [ReasonInput]>('requestInfo');
/** The investor's answer to the open information request (docs/decisions/0277-answering-an-information-request.md). */
export const provideInfo = defineUpdate<SubscriptionView, [ProvideInfoInput]>('provideInfo');
export const issueShares = defineUpdate<SubscriptionView, [{ actorId: string }]>('issueShares');
export const retryCollection = defineUpdate<SubscriptionView, [{ actorId: string }]>('retryCollection');
export const refund = defineUpdate<SubscriptionView, [RefundInput]>('refund');
/** Reconcile a Set A wire or check; its wire name predates the one name, and histories carry it. */
export const reconcile = defineUpdate<SubscriptionView, [ReconcileInput]>('reconcileFunds');

/**
 * Puts sealed values (or the erased marker) where the state still holds an investor's words in clear,
 * written before they were sealed at the door; nothing else changes, and no event is published
 * (docs/decisions/0384-resealing-fields-written-in-clear.md). Sent by `npm run personal-data -- reseal` and by an erasure.
 */
export const sealPersonalData = defineUpdate<SubscriptionView, [PersonalFields]>('sealPersonalData');

export const paymentNotified = defineSignal<[PaymentNotification]>('paymentNotified');
/**
 * The commitment sweep's word to an unsigned subscription past its lifetime that holds no deadline of
 * its own (created by a release before drafts expired): the deadline to keep, computed from its
 * creation and SUBSCRIPTION_DRAFT_TTL. It also wakes the workflow, so it runs today's code
 * (docs/decisions/0368-unsigned-drafts-expire.md).
 */
export const draftDeadline = defineSignal<[{ expiresAt: string }]>('draftDeadline');

export const getSubscription = defineQuery<SubscriptionState>('getSubscription');

/** The workflow's type name and input: the API starts it by name and never imports workflow code. */
export const SUBSCRIPTION_WORKFLOW = 'subscriptionWorkflow';
export type SubscriptionWorkflowInput =
  | { start: NewSubscription }
  | { resume: SubscriptionState; pendingPayments: PaymentNotification[]; seenNotifications: string[] };
export type SubscriptionWorkflow = (input: SubscriptionWorkflowInput) => Promise<SubscriptionView>;
