/**
 * Every transition of spec §3 as a pure function of the state: guards (used by update validators
 * and again inside handlers) and the change each command makes, with the events it emits.
 * No I/O and no clock: the workflow passes `now` in. The processor's notifications are
 * workflows/subscription-payments.ts.
 */
import {
  CANCELLABLE,
  type NewSubscription,
  type InfoExchange,
  type SubscriptionState,
  type SubscriptionStatus,
} from '../domain/subscription';
import { change, type Change } from './subscription-change';
import { fundsInEscrow } from './subscription-payments';
import { invalidTransition, refusal } from '../domain/refusal';
import { sameAmount } from '../lib/decimal-amount';
import { INFO_PROVIDED } from '../domain/events';
import type {
  ProvideInfoInput,
  ReasonInput,
  SignAgreementInput,
  SubmitForReviewInput,
} from '../domain/subscription-messages';

export type { Change };

function requireStatus(s: SubscriptionState, command: string, allowed: readonly SubscriptionStatus[]): void {
  if (!allowed.includes(s.status)) throw invalidTransition(command, s.status, allowed);
}
function requireSet(s: SubscriptionState, command: string, set: 'A' | 'B'): void {
  if (s.set !== set) throw refusal(409, 'NOT_IN_BEHAVIOUR_SET', `${command} is a Set ${set} operation`);
}

// Decision (docs/decisions/0004-draft-to-pending-signature.md): draft -> pending_signature when the investor asks
// for the agreement.
const SIGNABLE: readonly SubscriptionStatus[] = ['draft', 'pending_signature'];
// Decision: only an agreement that exists and is not yet fulfilled can be voided.
const VOIDABLE: readonly SubscriptionStatus[] = ['pending_payment', 'pending_review', 'approved'];

export const guards = {
  requestSignature: (s: SubscriptionState) => requireStatus(s, 'request a signature for', ['draft']),
  sign: (s: SubscriptionState) => requireStatus(s, 'sign', SIGNABLE),
  setupSession: (s: SubscriptionState) => {
    requireSet(s, 'create-setup-session', 'A');
    requireStatus(s, 'start payment setup for', ['pending_payment']);
  },
  finalizeSetup: (s: SubscriptionState) => {
    requireSet(s, 'finalize-setup', 'A');
    requireStatus(s, 'finalize payment setup for', ['pending_payment']);
    if (!s.setupSessionId) throw refusal(409, 'SETUP_SESSION_MISSING', 'Create a setup session first');
  },
  submitForReview: (s: SubscriptionState, input: SubmitForReviewInput) => {
    requireSet(s, 'submit-for-review', 'A');
    requireStatus(s, 'submit', ['pending_payment']);
    if (!input.paymentMethod && !s.paymentMethodLinked) {
      throw refusal(
        409,
        'PAYMENT_METHOD_NOT_LINKED',
        'Link a card or bank account (create-setup-session, then finalize-setup), or submit with paymentMethod wire or check',
      );
    }
  },
  checkoutSession: (s: SubscriptionState) => {
    requireSet(s, 'create-checkout-session', 'B');
    requireStatus(s, 'start checkout for', ['pending_payment']);
    if (s.paymentStatus === 'processing' || s.paymentStatus === 'received') {
      throw refusal(409, 'PAYMENT_IN_PROGRESS', `A payment is already ${s.paymentStatus}`);
    }
  },
  cancel: (s: SubscriptionState) => {
    if (!CANCELLABLE.includes(s.status)) {
      throw refusal(409, 'NOT_CANCELLABLE', `A subscription that is ${s.status} cannot be cancelled`, {
        status: s.status,
        allowed_from: CANCELLABLE,
      });
    }
  },
  /** Staff end it from the states the investor may (docs/decisions/0369-staff-cancel-before-review.md). */
  cancelByStaff: (s: SubscriptionState) => guards.cancel(s),
  approve: (s: SubscriptionState) => requireStatus(s, 'approve', ['pending_review']),
  reject: (s: SubscriptionState) => requireStatus(s, 'reject', ['pending_review']),
  void: (s: SubscriptionState) => requireStatus(s, 'void', VOIDABLE),
  requestInfo: (s: SubscriptionState) => requireStatus(s, 'request information on', ['pending_review']),
  provideInfo: (s: SubscriptionState) => {
    if (!s.infoRequested) {
      throw refusal(409, 'NO_OPEN_INFO_REQUEST', 'There is no open information request to answer', {
        status: s.status,
      });
    }
    requireStatus(s, 'answer an information request on', ['pending_review']);
  },
  issueShares: (s: SubscriptionState) => {
    requireSet(s, 'issue-shares', 'B');
    requireStatus(s, 'issue shares for', ['approved']);
  },
  retryCollection: (s: SubscriptionState) => {
    requireSet(s, 'retry-collection', 'A');
    requireStatus(s, 'retry collection for', ['approved']);
    if (!s.paymentMethodLinked || s.paymentStatus !== 'failed') {
      throw refusal(409, 'NOTHING_TO_RETRY', 'Only a failed collection from a linked payment method can be retried');
    }
  },
  reconcile: (s: SubscriptionState, amount: string) => {
    requireSet(s, 'reconcile', 'A');
    requireStatus(s, 'reconcile funds for', ['approved']);
    if (s.paymentMethod !== 'wire' && s.paymentMethod !== 'check') {
      throw refusal(409, 'NOT_OFFLINE_PAYMENT', 'Only wire or check subscriptions are reconciled by staff');
    }
    if (!sameAmount(amount, s.totalAmount)) {
      throw refusal(422, 'AMOUNT_MISMATCH', `Received ${amount} but the subscription total is ${s.totalAmount}`, {
        expected: s.totalAmount,
        received: amount,
      });
    }
  },
};

/** The subscription as the workflow first holds it (spec §3: draft, payment pending). */
export function initialState(n: NewSubscription): SubscriptionState {
  return {
    ...n,
    paymentStatus: 'pending',
    status: 'draft',
    agreementSigned: false,
    signature: null,
    signedAt: null,
    signerIp: null,
    setupSessionId: null,
    paymentMethodLinked: false,
    collectionAttempts: 0,
    checkoutSessionId: null,
    referenceCode: null,
    sharesId: null,
    sharesIssuedAt: null,
    statusReason: null,
    infoRequested: null,
    updatedAt: n.createdAt,
    version: 0,
    eventSequence: 0,
  };
}

export const transitions = {
  requestSignature: (s: SubscriptionState): Change => change(s, { status: 'pending_signature' }),

  sign: (s: SubscriptionState, input: SignAgreementInput): Change =>
    change(
      s,
      {
        status: 'pending_payment',
        agreementSigned: true,
        signature: input.signature,
        signedAt: input.signedAt,
        signerIp: input.ipAddress,
      },
      { type: 'subscription.signed' },
    ),

  linkPaymentMethod: (s: SubscriptionState): Change => change(s, { paymentMethodLinked: true }),

  /**
   * Wire or check releases a linked card or account: approval then collects nothing, and the
   * reference code is the one way to pay (docs/decisions/0056-wire-after-linked-card.md).
   */
  submitForReview: (s: SubscriptionState, input: SubmitForReviewInput, referenceCode: string): Change =>
    input.paymentMethod
      ? change(s, {
          status: 'pending_review',
          paymentMethod: input.paymentMethod,
          referenceCode,
          paymentMethodLinked: false,
        })
      : change(s, { status: 'pending_review' }),

  /** `cancelled_by` says who ended it (docs/decisions/0369-staff-cancel-before-review.md). */
  cancel: (s: SubscriptionState): Change =>
    change(s, { status: 'cancelled' }, { type: 'subscription.cancelled', data: { cancelled_by: 'investor' } }),

  cancelByStaff: (s: SubscriptionState, input: ReasonInput): Change =>
    change(
      s,
      { status: 'cancelled', statusReason: input.reason },
      { type: 'subscription.cancelled', data: { reason: input.reason, cancelled_by: 'staff' } },
    ),

  /** Unsigned at its deadline, in the audit trail as the service's own move (docs/decisions/0368-unsigned-drafts-expire.md). */
  expire: (s: SubscriptionState): Change =>
    change(
      s,
      { status: 'cancelled', statusReason: 'expired' },
      {
        type: 'subscription.cancelled',
        data: { reason: 'expired', cancelled_by: 'expiry' },
        audit: {
          action: 'subscription.expire',
          system: 'draft-expiry',
          processor: null,
          requestId: null,
          clientAddress: null,
          before: { status: s.status, expires_at: s.draftExpiresAt ?? null },
        },
      },
    ),

  approve: (s: SubscriptionState): Change => change(s, { status: 'approved' }, { type: 'subscription.approved' }),

  reject: (s: SubscriptionState, input: ReasonInput): Change =>
    change(
      s,
      { status: 'rejected', statusReason: input.reason },
      {
        type: 'subscription.rejected',
        data: { reason: input.reason },
      },
    ),

  void: (s: SubscriptionState, input: ReasonInput): Change =>
    change(
      s,
      { status: 'voided', statusReason: input.reason },
      {
        type: 'subscription.voided',
        data: { reason: input.reason },
      },
    ),

  /** Asked again while one is open: the new request is the open one, the older stays unanswered. */
  requestInfo: (s: SubscriptionState, input: ReasonInput, now: string): Change =>
    change(
      s,
      {
        infoRequested: input.reason,
        infoExchanges: [
          ...exchangesOf(s),
          { message: input.reason, requestedAt: now, requestedBy: input.actorId, answer: null },
        ],
      },
      { type: 'subscription.info_requested', data: { message: input.reason } },
    ),

  /** The answer closes the open (latest) request; the subscription stays in review. */
  provideInfo: (s: SubscriptionState, input: ProvideInfoInput, now: string): Change => {
    const history = exchangesOf(s);
    const open = history[history.length - 1]!;
    const answer = {
      message: input.message,
      documentReferences: input.documentReferences,
      answeredAt: now,
      answeredBy: input.actorId,
    };
    return change(
      s,
      { infoRequested: null, infoExchanges: [...history.slice(0, -1), { ...open, answer }] },
      {
        type: INFO_PROVIDED,
        data: { message: input.message, document_references: input.documentReferences },
      },
    );
  },

  issueShares: (s: SubscriptionState, sharesId: string, now: string): Change =>
    change(
      s,
      { status: 'completed', sharesId, sharesIssuedAt: now },
      { type: 'subscription.completed' },
      {
        type: 'shares.issued',
        data: {
          shares_id: sharesId,
          subscription_id: s.id,
          offering_id: s.offeringId,
          security_class_id: s.securityClassId,
          units: s.unitsSubscribed,
          issued_at: now,
        },
      },
    ),

  /** Set A: staff ask for the failed collection again (perhaps after the investor fixed their card). */
  retryCollection: (s: SubscriptionState): Change =>
    change(s, { paymentStatus: 'pending', statusReason: null, collectionAttempts: (s.collectionAttempts ?? 0) + 1 }),

  /** Set A: staff reconcile a wire or check by its reference code; its funds are in escrow. */
  reconcile: (s: SubscriptionState): Change => fundsInEscrow(s),
};

/**
 * Every request and answer so far. States from before answers kept only the open request's message:
 * it becomes the one entry (asked at the last change, by someone not recorded).
 */
function exchangesOf(s: SubscriptionState): InfoExchange[] {
  if (s.infoExchanges) return s.infoExchanges;
  return s.infoRequested
    ? [{ message: s.infoRequested, requestedAt: s.updatedAt, requestedBy: null, answer: null }]
    : [];
}
