import type { ApplicationFailure } from '@temporalio/common';
import type { SubscriptionState } from '../../domain/subscription';
import type { PaymentNotification } from '../../domain/subscription-messages';
import { newSubscription } from '../support/fixtures';
import { applyPayment } from '../../workflows/subscription-payments';
import { guards, initialState, transitions } from '../../workflows/subscription-transitions';

/**
 * Spec §3's transitions as pure functions (workflows/subscription-transitions.ts), without a
 * server: which command each status allows, what a change sets and emits, how payments apply.
 */
const draft = (set: 'A' | 'B'): SubscriptionState => initialState(newSubscription({ set }));

const signed = (set: 'A' | 'B') =>
  transitions.sign(transitions.requestSignature(draft(set)).state, {
    signature: 'Ada Lovelace',
    signedAt: '2026-11-21T10:00:00Z',
    ipAddress: null,
  }).state;

/** The refusal a guard throws: its code and HTTP status. */
function refusedBy(guard: () => void): { code: string; status: number } | null {
  try {
    guard();
    return null;
  } catch (err) {
    const f = err as ApplicationFailure;
    return { code: String(f.type), status: (f.details?.[0] as { status: number }).status };
  }
}

const paid = (kind: PaymentNotification['kind'], extra: Partial<PaymentNotification> = {}): PaymentNotification =>
  ({
    kind,
    processorEventId: `evt-${kind}`,
    reference: 'cs_1',
    payment: 'pay_1',
    amount: '20.00',
    ...extra,
  }) as PaymentNotification;

describe('subscription transitions, without a server (spec §3)', () => {
  it('starts as a draft with payment pending, at version 0', () => {
    expect(draft('A')).toMatchObject({ status: 'draft', paymentStatus: 'pending', version: 0, agreementSigned: false });
  });

  it('goes draft -> pending_signature -> pending_payment, recording the signature and emitting subscription.signed', () => {
    const asked = transitions.requestSignature(draft('A'));
    expect(asked.state.status).toBe('pending_signature');
    expect(asked.events).toEqual([]);
    const s = transitions.sign(asked.state, {
      signature: 'Ada',
      signedAt: '2026-11-21T10:00:00Z',
      ipAddress: '203.0.113.7',
    });
    expect(s.state).toMatchObject({
      status: 'pending_payment',
      agreementSigned: true,
      signature: 'Ada',
      signerIp: '203.0.113.7',
    });
    expect(s.events.map((e) => e.type)).toEqual(['subscription.signed']);
    expect(asked.state.status).toBe('pending_signature'); // a new state: the one it came from is left as it was
  });

  it('refuses a command from a status that does not allow it, with 409 INVALID_TRANSITION', () => {
    expect(refusedBy(() => guards.approve(draft('A')))).toEqual({ code: 'INVALID_TRANSITION', status: 409 });
    expect(refusedBy(() => guards.requestSignature(signed('A')))).toEqual({ code: 'INVALID_TRANSITION', status: 409 });
    expect(refusedBy(() => guards.void(draft('A')))).toEqual({ code: 'INVALID_TRANSITION', status: 409 });
    expect(refusedBy(() => guards.sign(draft('A')))).toBeNull(); // a draft may be signed straight away
  });

  it('keeps each behaviour set’s operations to its own set', () => {
    expect(refusedBy(() => guards.checkoutSession(signed('A')))).toEqual({ code: 'NOT_IN_BEHAVIOUR_SET', status: 409 });
    expect(refusedBy(() => guards.submitForReview(signed('B'), { paymentMethod: 'wire' }))).toEqual({
      code: 'NOT_IN_BEHAVIOUR_SET',
      status: 409,
    });
    expect(refusedBy(() => guards.checkoutSession(signed('B')))).toBeNull();
  });

  it('Set A: submits only with a linked method or an offline one, then reconciles only the exact total', () => {
    const s = signed('A');
    expect(refusedBy(() => guards.submitForReview(s, {}))).toEqual({ code: 'PAYMENT_METHOD_NOT_LINKED', status: 409 });
    const inReview = transitions.submitForReview(s, { paymentMethod: 'wire' }, 'TRN-AAAA-BBBB-CCC').state;
    expect(inReview).toMatchObject({
      status: 'pending_review',
      paymentMethod: 'wire',
      referenceCode: 'TRN-AAAA-BBBB-CCC',
    });
    const approved = transitions.approve(inReview);
    expect(approved.events.map((e) => e.type)).toEqual(['subscription.approved']);
    expect(refusedBy(() => guards.reconcile(approved.state, '19.99'))).toEqual({
      code: 'AMOUNT_MISMATCH',
      status: 422,
    });
    expect(refusedBy(() => guards.reconcile(approved.state, '20.00'))).toBeNull();
  });

  it('cancels only before review, and rejects or voids with the reason in the event', () => {
    expect(refusedBy(() => guards.cancel(signed('A')))).toBeNull();
    const inReview = transitions.submitForReview(signed('A'), { paymentMethod: 'wire' }, 'TRN-AAAA-BBBB-CCC').state;
    expect(refusedBy(() => guards.cancel(transitions.approve(inReview).state))).toEqual({
      code: 'NOT_CANCELLABLE',
      status: 409,
    });
    const rejected = transitions.reject(inReview, { actorId: 'staff-1', reason: 'sanctions list' });
    expect(rejected.state).toMatchObject({ status: 'rejected', statusReason: 'sanctions list' });
    expect(rejected.events).toEqual([
      expect.objectContaining({ type: 'subscription.rejected', data: { reason: 'sanctions list' } }),
    ]);
  });

  it('Set B: a payment before signing waits; once signed it funds the subscription into review', () => {
    expect(applyPayment(draft('B'), paid('succeeded'))).toBeUndefined();
    const funded = applyPayment(signed('B'), paid('succeeded'))!;
    expect(funded.state).toMatchObject({ status: 'pending_review', paymentStatus: 'received' });
    expect(funded.events.map((e) => e.type)).toContain('subscription.funded');
  });

  it('ignores a failure that arrives after the payment was captured, and records one that comes first', () => {
    const funded = applyPayment(signed('B'), paid('succeeded'))!.state;
    expect(applyPayment(funded, paid('failed', { processorEventId: 'evt-late-fail' }))!.state).toEqual(funded);
    const failed = applyPayment(signed('B'), paid('failed', { failureReason: 'card_declined' }))!;
    expect(failed.state).toMatchObject({
      status: 'pending_payment',
      paymentStatus: 'failed',
      statusReason: 'card_declined',
    });
  });
});
