import type { Principal } from '../../domain/principal';
import type { SubscriptionView } from '../../domain/subscription-view';
import { commandForms } from '../commands';
import { chip, money, when } from '../format';
import { html, type Html } from '../../lib/html';
import { banner, type Notice } from '../layout';
import { formKeyField } from './form-key-view';

/**
 * Set A: find the subscription a wire or check quotes by its reference code, then reconcile the amount
 * received. The reconcile form carries an Idempotency-Key (`formKey` when shown again for the same
 * request, console/form-keys.ts).
 */
export function fundsBodyA(
  q: { referenceCode: string; found: SubscriptionView | null; amount?: string; formKey?: string },
  notice: Notice | null,
  refunds?: { lookup: RefundLookup; principal: Principal },
): Html {
  const s = q.found;
  return html`<hgroup><h1>Funds</h1><p>Match an incoming wire or check to its subscription by the reference code it quotes.</p></hgroup>
${banner(notice)}
<search><form method="get" action="/console/funds" class="lookup">
  <label for="reference_code">Reference code</label>
  <fieldset role="group">
    <input id="reference_code" name="reference_code" value="${q.referenceCode}" required maxlength="40" placeholder="TRN-XXXX-XXXX-XXX" autocomplete="off" spellcheck="false">
    <button type="submit">Look up</button>
  </fieldset>
</form></search>
${
  s
    ? html`<article data-testid="found" aria-labelledby="found-h">
  <header><h2 id="found-h">Subscription <a href="/console/subscriptions/${s.id}"><code>${s.id}</code></a></h2></header>
  <dl class="facts">
    <div><dt>Reference code</dt><dd><code>${s.reference_code ?? ''}</code></dd></div>
    <div><dt>Status</dt><dd data-testid="status">${chip(s.status)}</dd></div>
    <div><dt>Payment</dt><dd data-testid="payment-status">${chip(s.payment_status)} <span class="muted">${s.payment_method ?? ''}</span></dd></div>
    <div><dt>Expected</dt><dd>${money(s.total_amount, s.currency)}</dd></div>
  </dl>
  ${
    s.status === 'approved' && s.payment_status !== 'in_escrow'
      ? html`<form method="post" action="/console/funds/reconcile">
    ${formKeyField(q.formKey)}
    <input type="hidden" name="reference_code" value="${s.reference_code ?? q.referenceCode}">
    <label for="amount">Amount received (${s.currency})</label>
    <fieldset role="group">
      <input id="amount" name="amount" required inputmode="decimal" pattern="[0-9]+(\\.[0-9]{1,2})?" value="${q.amount ?? ''}" aria-describedby="amount-hint" autocomplete="off">
      <button type="submit" data-testid="reconcile">Reconcile</button>
    </fieldset>
    <small id="amount-hint">As on the bank statement, e.g. 1250.00. It must equal the expected amount.</small>
  </form>`
      : html`<p>${s.status === 'pending_review' ? 'Approve the subscription before reconciling its funds.' : 'Nothing to reconcile in this state.'}</p>`
  }
</article>`
    : ''
}
${refunds ? refundSection(refunds.lookup, refunds.principal) : ''}`;
}

/** Set B: approved subscriptions, paid and reviewed, waiting for their shares. */
export function fundsBodyB(
  items: SubscriptionView[],
  p: Principal,
  notice: Notice | null,
  refund: RefundLookup = { subscriptionId: '', found: null },
): Html {
  return html`<hgroup><h1>Funds</h1><p>Approved subscriptions waiting for their shares to be issued, oldest first.</p></hgroup>
${banner(notice)}
${
  items.length
    ? html`<div class="overflow-auto"><table class="striped" data-testid="approved">
<caption class="visually-hidden">Approved subscriptions</caption>
<thead><tr><th scope="col">Subscription</th><th scope="col">Amount</th><th scope="col">Payment</th><th scope="col">Approved</th><th scope="col">Action</th></tr></thead>
<tbody>${items.map(
        (s) => html`<tr id="issue-${s.id}">
<td><a href="/console/subscriptions/${s.id}"><code>${s.id.slice(0, 8)}</code><span class="visually-hidden"> ${s.id}</span></a></td>
<td>${money(s.total_amount, s.currency)} <span class="muted">(${s.units_subscribed} units)</span></td>
<td>${chip(s.payment_status)}</td><td>${when(s.updated_at)}</td>
<td>${commandForms(s.id, ['issue-shares'], p, { from: 'funds', target: `#issue-${s.id}` })}</td></tr>`,
      )}</tbody>
</table></div>`
    : html`<p data-testid="none-approved">No approved subscription is waiting for shares.</p>`
}
${refundSection(refund, p)}`;
}

/** What replaces a row once shares were issued (htmx), or the row again with the refusal. */
export function issuedRow(s: SubscriptionView, notice: Notice): Html {
  return html`<tr id="issue-${s.id}"><td colspan="5">${banner(notice)} <a href="/console/subscriptions/${s.id}">Open subscription</a>
  ${s.shares_id ? html` · shares <code>${s.shares_id}</code>` : ''}</td></tr>`;
}

/** The refund lookup on the funds page: the subscription found by its id, and the amount last typed. */
export interface RefundLookup {
  subscriptionId: string;
  found: SubscriptionView | null;
  amount?: string;
  /** The refund form's Idempotency-Key when it is shown again for the same request (console/form-keys.ts). */
  formKey?: string;
}

/**
 * Both sets: money going back (docs/decisions/0284-refunds.md). Look a subscription up by its id, see
 * what was taken beside what went back, and (admins) refund all or part of it with a reason; the API
 * decides what may be refunded and says why when it refuses.
 */
function refundSection(q: RefundLookup, p: Principal): Html {
  const s = q.found;
  const admin = p.roles.includes('admin');
  return html`<section aria-labelledby="refunds-h" data-testid="refunds">
<h2 id="refunds-h">Refunds</h2>
<p>Held payments (a second payment, a wrong amount), and the money of cancelled, rejected or voided subscriptions, go back to the payer through the processor.</p>
<search><form method="get" action="/console/funds" class="lookup">
  <label for="refund_subscription">Subscription id</label>
  <fieldset role="group">
    <input id="refund_subscription" name="refund" value="${q.subscriptionId}" required maxlength="36" autocomplete="off" spellcheck="false">
    <button type="submit" data-testid="refund-lookup">Find subscription</button>
  </fieldset>
</form></search>
${
  s
    ? html`<article data-testid="refund-found" aria-labelledby="refund-found-h">
  <header><h3 id="refund-found-h">Subscription <a href="/console/subscriptions/${s.id}"><code>${s.id}</code></a></h3></header>
  <dl class="facts">
    <div><dt>Status</dt><dd>${chip(s.status)}</dd></div>
    <div><dt>Payment</dt><dd data-testid="refund-payment-status">${chip(s.payment_status)}</dd></div>
    <div><dt>Received</dt><dd data-testid="amount-received">${money(s.amount_received ?? '0', s.currency)}</dd></div>
    <div><dt>Refunded</dt><dd data-testid="amount-refunded">${money(s.amount_refunded ?? '0', s.currency)}</dd></div>
  </dl>
  ${
    admin
      ? html`<form method="post" action="/console/funds/refund">
    ${formKeyField(q.formKey)}
    <input type="hidden" name="subscription_id" value="${s.id}">
    <label for="refund-amount">Amount to refund (${s.currency}); empty refunds everything refundable</label>
    <input id="refund-amount" name="amount" inputmode="decimal" pattern="[0-9]+(\\.[0-9]{1,4})?" value="${q.amount ?? ''}" autocomplete="off">
    <label for="refund-reason">Reason (kept in the audit trail)</label>
    <textarea id="refund-reason" name="reason" required minlength="1" maxlength="2000" rows="2"></textarea>
    <button type="submit" class="contrast" data-testid="refund-submit">Refund</button>
  </form>`
      : html`<p>Only an admin may refund.</p>`
  }
</article>`
    : ''
}
</section>`;
}
