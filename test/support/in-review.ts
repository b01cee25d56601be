import { reaches, postSandboxEvent, RETURN_URLS, type World } from '../payments/payment-helpers';
import type { TestService } from './service';
import type { LifecycleWorld } from './subscriptions';

/**
 * A subscription of the lifecycle world brought to pending_review the way its set gets there:
 * Set A by wire (submit-for-review), Set B paid at checkout (the sandbox's signed
 * `payment.succeeded`, as the sandbox sends it).
 */
export async function inReview(svc: TestService, w: LifecycleWorld): Promise<Record<string, any>> {
  if (svc.set === 'A') return w.inReviewByWire();
  const s = await w.signed();
  const checkout = await w.post(s.id, 'create-checkout-session', w.investor, { paymentMethod: 'card', ...RETURN_URLS });
  if (checkout.status !== 200) throw new Error(`checkout: ${checkout.status} ${JSON.stringify(checkout.body)}`);
  const paid = await postSandboxEvent(svc, `evt_paid_${s.id}`, 'payment.succeeded', {
    subscription_id: s.id,
    reference: checkout.body.data.session_id,
    amount: s.total_amount,
    currency: s.currency,
  });
  if (paid.status !== 200) throw new Error(`payment: ${paid.status} ${JSON.stringify(paid.body)}`);
  const world: World = { api: w.api, staff: w.staff, admin: w.admin, investor: w.investor, offering: w.offering };
  return reaches(world, s.id, { status: 'pending_review', payment_status: 'received' });
}
