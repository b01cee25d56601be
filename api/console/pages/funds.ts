import type { Principal } from '../../../domain/principal';
import type { SubscriptionView } from '../../../domain/subscription-view';
import { commandForms } from '../commands';
import { chip, money, when } from '../format';
import { html, type Html } from '../html';
import { banner, type Notice } from '../layout';

/** Set A: find the subscription a wire or check quotes by its reference code, then reconcile the amount received. */
export function fundsBodyA(
  q: { referenceCode: string; found: SubscriptionView | null; amount?: string },
  notice: Notice | null,
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
}`;
}

/** Set B: approved subscriptions, paid and reviewed, waiting for their shares. */
export function fundsBodyB(items: SubscriptionView[], p: Principal, notice: Notice | null): Html {
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
}`;
}

/** What replaces a row once shares were issued (htmx), or the row again with the refusal. */
export function issuedRow(s: SubscriptionView, notice: Notice): Html {
  return html`<tr id="issue-${s.id}"><td colspan="5">${banner(notice)} <a href="/console/subscriptions/${s.id}">Open subscription</a>
  ${s.shares_id ? html` · shares <code>${s.shares_id}</code>` : ''}</td></tr>`;
}
