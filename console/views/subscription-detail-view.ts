import type { Principal } from '../../domain/principal';
import type { SubscriptionView } from '../../domain/subscription-view';
import { commandForms, type CommandName, REVIEW_COMMANDS } from '../commands';
import { chip, money, when } from '../format';
import { infoRequests } from './info-requests-view';
import { html, type Html } from '../../lib/html';
import { banner, type Notice } from '../layout';
import type { TemporalLinks } from '../links';
import type { Activity } from '../api-types';

export function subscriptionBody(
  s: SubscriptionView,
  a: Activity,
  p: Principal,
  links: TemporalLinks,
  set: string,
  notice: Notice | null,
): Html {
  const commands: CommandName[] =
    s.status === 'pending_review'
      ? REVIEW_COMMANDS
      : s.status === 'approved'
        ? set === 'B'
          ? ['issue-shares', 'void']
          : ['void']
        : s.status === 'pending_payment'
          ? ['cancel', 'void']
          : s.status === 'draft' || s.status === 'pending_signature'
            ? ['cancel']
            : [];
  return html`<nav aria-label="Breadcrumb"><ul><li><a href="/console/">Review queue</a></li><li>Subscription</li></ul></nav>
<hgroup><h1>Subscription <code>${s.id}</code></h1>
<p>${chip(s.status)} · ${money(s.total_amount, s.currency)} ·
<a href="${links.subscription(s.id)}" target="_blank" rel="noopener" data-testid="workflow-link">Workflow in the Temporal Web UI<span class="visually-hidden"> (opens in a new tab)</span></a></p></hgroup>
${banner(notice)}
<div class="grid">
<section aria-labelledby="summary-h"><h2 id="summary-h">Summary</h2>
<dl class="facts">
  <div><dt>Status</dt><dd data-testid="status">${chip(s.status)}</dd></div>
  <div><dt>Payment</dt><dd>${chip(s.payment_status)} <span class="muted">${s.payment_method ?? ''}</span></dd></div>
  <div><dt>Units</dt><dd>${s.units_subscribed} × ${s.price_per_unit} ${s.currency}</dd></div>
  <div><dt>Agreement signed</dt><dd>${s.subscription_agreement_signed ? when(s.signed_at) : 'no'}</dd></div>
  ${s.reference_code ? html`<div><dt>Reference code</dt><dd><code>${s.reference_code}</code></dd></div>` : ''}
  ${s.shares_id ? html`<div><dt>Shares</dt><dd><code>${s.shares_id}</code> issued ${when(s.shares_issued_at)}</dd></div>` : ''}
  ${s.status_reason ? html`<div><dt>Reason</dt><dd>${s.status_reason}</dd></div>` : ''}
  ${s.expires_at ? html`<div><dt>Expires unsigned</dt><dd data-testid="expires-at">${when(s.expires_at)}</dd></div>` : ''}
  <div><dt>Created</dt><dd>${when(s.created_at)}</dd></div>
  <div><dt>Updated</dt><dd>${when(s.updated_at)}</dd></div>
</dl>
${infoRequests(s)}</section>
<section aria-labelledby="actions-h"><h2 id="actions-h">Actions</h2>
${commands.length ? commandForms(s.id, commands, p, { from: 'detail', target: 'main' }) : html`<p>No staff action applies in this state.</p>`}
</section>
</div>
<section aria-labelledby="history-h"><h2 id="history-h">History</h2>
<div class="overflow-auto"><table class="striped" data-testid="history">
<caption class="visually-hidden">Events of this subscription, oldest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Status after</th><th scope="col">Payment</th><th scope="col">Note</th></tr></thead>
<tbody>${a.events.map((e) => html`<tr><td>${when(e.occurred_at)}</td><td><code>${e.type}</code></td><td>${chip(e.status)}</td><td>${chip(e.payment_status)}</td><td>${e.reason ?? e.message ?? ''}</td></tr>`)}</tbody>
</table></div>
${a.events.length ? '' : html`<p>No events yet.</p>`}
</section>
<section aria-labelledby="deliveries-h"><h2 id="deliveries-h">Webhook deliveries</h2>
${
  a.deliveries.length
    ? html`<div class="overflow-auto"><table class="striped" data-testid="deliveries">
<caption class="visually-hidden">Deliveries of this subscription's events</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last attempt</th><th scope="col">Next attempt</th><th scope="col">Workflow</th></tr></thead>
<tbody>${a.deliveries.map(
        (
          d,
        ) => html`<tr><td><code>${d.event_type}</code></td><td><a href="/console/webhooks/${d.endpoint_id}">${d.endpoint_url}</a></td><td>${chip(d.status)}</td><td>${d.attempt_count}</td><td>${when(d.last_attempt_at)}</td><td>${when(d.next_attempt_at)}</td>
<td><a href="${links.delivery(d.id)}" target="_blank" rel="noopener">Open<span class="visually-hidden"> delivery ${d.id} workflow (new tab)</span></a></td></tr>`,
      )}</tbody>
</table></div>`
    : html`<p>No deliveries: no webhook endpoint subscribes to these events.</p>`
}
</section>`;
}
