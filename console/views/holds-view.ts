import type { Offering } from '../api-types';
import type { SubscriptionView } from '../../domain/subscription-view';
import { chip, money, when } from '../format';
import { html, type Html } from '../../lib/html';

/**
 * An offering's subscriptions not yet in review, oldest first: what holds its capacity while nobody
 * has decided anything (docs/decisions/0369-staff-cancel-before-review.md). Each links to its page,
 * where staff may cancel it with a reason; unsigned ones show when they expire by themselves
 * (docs/decisions/0368-unsigned-drafts-expire.md).
 */
export function holdsBody(o: Offering, held: SubscriptionView[]): Html {
  return html`<nav aria-label="Breadcrumb"><ul><li><a href="/console/offerings">Offerings</a></li><li>${o.name}</li></ul></nav>
<hgroup><h1>${o.name}: not yet in review</h1>
<p>Committed ${money(o.committed_amount, o.currency)}${o.max_amount === null ? '' : html` of ${money(o.max_amount, o.currency)}`}.
Drafts and unsigned subscriptions expire by themselves; staff may cancel any of these with a reason.</p></hgroup>
${
  held.length
    ? html`<div class="overflow-auto"><table class="striped" data-testid="holds">
  <caption class="visually-hidden">Subscriptions of ${o.name} in draft, pending_signature or pending_payment, oldest first</caption>
  <thead><tr><th scope="col">Subscription</th><th scope="col">Investor</th><th scope="col">Status</th><th scope="col">Total</th><th scope="col">Created</th><th scope="col">Expires unsigned</th></tr></thead>
  <tbody>${held.map(
    (s) => html`<tr data-testid="hold-${s.id}">
    <th scope="row"><a href="/console/subscriptions/${s.id}">${s.id.slice(0, 8)}</a></th>
    <td>${s.investor_id}</td>
    <td>${chip(s.status)}</td>
    <td class="amount">${money(s.total_amount, s.currency)}</td>
    <td>${when(s.created_at)}</td>
    <td>${s.expires_at ? when(s.expires_at) : html`<span class="muted">signed</span>`}</td>
  </tr>`,
  )}</tbody></table></div>`
    : html`<p data-testid="holds-empty">Nothing is waiting before review.</p>`
}`;
}
