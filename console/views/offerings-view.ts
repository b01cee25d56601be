import type { OfferingList } from '../api-types';
import { chip, money } from '../format';
import { html, type Html } from '../../lib/html';

/**
 * Each offering's capacity at a glance (docs/decisions/0278-offering-capacity-reservations.md): what
 * subscriptions not cancelled, rejected or voided commit, what is left under the maximum, the cap per
 * investor (docs/decisions/0370-per-investor-cap.md), and a link to what holds it before review.
 */
export function offeringsBody({ items, next_cursor }: OfferingList): Html {
  return html`<hgroup><h1>Offerings</h1><p>Committed: subscriptions not cancelled, rejected or voided. Raised: funds received.</p></hgroup>
${
  items.length
    ? html`<div class="overflow-auto"><table class="striped" data-testid="offerings">
  <thead><tr><th scope="col">Offering</th><th scope="col">Status</th><th scope="col">Maximum</th><th scope="col">Committed</th><th scope="col">Remaining</th><th scope="col">Minimum investment</th><th scope="col">Cap per investor</th><th scope="col">Raised</th><th scope="col">Before review</th></tr></thead>
  <tbody>${items.map(
    (o) => html`<tr data-testid="offering-${o.id}">
    <th scope="row">${o.name}</th>
    <td>${chip(o.status)}</td>
    <td class="amount">${o.max_amount === null ? html`<span class="muted">no maximum</span>` : money(o.max_amount, o.currency)}</td>
    <td class="amount" data-testid="committed">${money(o.committed_amount, o.currency)}</td>
    <td class="amount" data-testid="remaining">${o.remaining_amount === null ? html`<span class="muted">unbounded</span>` : money(o.remaining_amount, o.currency)}</td>
    <td class="amount">${o.min_investment === null ? html`<span class="muted">none</span>` : money(o.min_investment, o.currency)}</td>
    <td class="amount">${o.max_per_investor === null ? html`<span class="muted">none</span>` : money(o.max_per_investor, o.currency)}</td>
    <td class="amount">${money(o.raised_amount, o.currency)}</td>
    <td><a href="/console/offerings/${o.id}/holds" data-testid="holds-link">Subscriptions</a></td>
  </tr>`,
  )}</tbody></table></div>`
    : html`<p data-testid="offerings-empty">No offering yet.</p>`
}
${next_cursor ? html`<p><a href="/console/offerings?cursor=${encodeURIComponent(next_cursor)}">Older offerings</a></p>` : ''}`;
}
