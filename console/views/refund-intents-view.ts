import type { RefundIntentList } from '../api-types';
import { chip, money, when } from '../format';
import { html, type Html } from '../../lib/html';

const OUTCOME = {
  requested: 'outcome not known yet',
  succeeded: 'refunded',
  failed: 'refused by the processor: nothing moved',
} as const;

/**
 * A subscription's refund intents on its page (docs/decisions/0374-refund-intents.md): each processor
 * refund as it was recorded before it was sent, and what the processor answered. Nothing when none.
 */
export function refundIntentsSection(items: RefundIntentList['items']): Html {
  if (!items.length) return html``;
  return html`<section aria-labelledby="refunds-h"><h2 id="refunds-h">Refunds</h2>
<div class="overflow-auto"><table class="striped" data-testid="refund-intents">
<caption class="visually-hidden">Refunds asked of the processor, oldest first</caption>
<thead><tr><th scope="col">Asked</th><th scope="col">Amount</th><th scope="col">Status</th><th scope="col">By</th><th scope="col">Reason</th><th scope="col">Processor</th></tr></thead>
<tbody>${items.map(
    (
      r,
    ) => html`<tr data-testid="refund-intent-${r.status}"><td>${when(r.requested_at)}</td><td>${money(r.amount, r.currency)}</td>
<td>${chip(r.status)} <small class="muted">${OUTCOME[r.status]}${r.settled_at ? html`, ${when(r.settled_at)}` : ''}</small>${r.failure ? html`<br><small>${r.failure}</small>` : ''}</td>
<td>${r.requested_by}</td><td>${r.reason}</td>
<td><small>payment <code>${r.payment}</code><br>key <code>${r.processor_key}</code>${r.processor_refund_id ? html`<br>refund <code>${r.processor_refund_id}</code>` : ''}</small></td></tr>`,
  )}</tbody>
</table></div>
</section>`;
}
