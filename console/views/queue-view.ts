import type { Principal } from '../../domain/principal';
import type { SubscriptionView } from '../../domain/subscription-view';
import { commandForms, REVIEW_COMMANDS } from '../commands';
import { chip, duration, money, when } from '../format';
import { html, type Html } from '../../lib/html';
import { banner, type Notice } from '../layout';
import { infoRequests } from './info-requests-view';
import type { QueueItem, QueuePage } from '../api-types';

export function queueBody({ items, next_cursor }: QueuePage, p: Principal, notice: Notice | null): Html {
  return html`<hgroup><h1>Review queue</h1><p>Subscriptions waiting for a compliance decision, oldest first.</p></hgroup>
${banner(notice)}
${
  items.length
    ? html`<ol class="queue" aria-label="Subscriptions pending review">${items.map((i) => html`<li>${queueCard(i, p, null)}</li>`)}</ol>`
    : html`<p data-testid="queue-empty">Nothing is waiting for review.</p>`
}
${next_cursor ? html`<p><a href="/console/?cursor=${encodeURIComponent(next_cursor)}" data-testid="queue-later">Later submissions</a></p>` : ''}`;
}

export function queueCard(i: QueueItem, p: Principal, notice: Notice | null): Html {
  const s = i.subscription;
  const id = `card-${s.id}`;
  return html`<article id="${id}" class="queue-card" data-testid="queue-card-${s.id}" aria-labelledby="${id}-title">
  <header>
    <h2 id="${id}-title" class="card-title"><a href="/console/subscriptions/${s.id}">Investor ${i.investor_id}</a>
      <span class="amount">${money(s.total_amount, s.currency)}</span></h2>
  </header>
  <dl class="facts">
    <div><dt>Units</dt><dd>${s.units_subscribed} × ${s.price_per_unit}</dd></div>
    <div><dt>Payment</dt><dd>${chip(s.payment_status)} <span class="muted">${s.payment_method ?? ''}</span></dd></div>
    <div><dt>KYC</dt><dd>${chip(i.kyc_status)}</dd></div>
    <div><dt>Accreditation</dt><dd>${chip(i.accreditation_status)}${i.accreditation_self_reported ? html` <span class="muted">self-reported: ${i.accreditation_self_reported}</span>` : ''}</dd></div>
    <div><dt>Waiting</dt><dd data-testid="waiting">${duration(i.waiting_seconds)} <span class="muted">since ${when(i.review_since)}</span></dd></div>
  </dl>
  ${infoRequests(s)}
  ${banner(notice)}
  <footer>${commandForms(s.id, REVIEW_COMMANDS, p, { from: 'queue', target: `#${id}` })}</footer>
</article>`;
}

/** What replaces a card once a command went through: the outcome, and where to look next. */
export function doneCard(s: SubscriptionView, text: string): Html {
  return html`<article id="card-${s.id}" class="queue-card done" data-testid="queue-card-${s.id}">
  <p role="status" data-testid="notice" tabindex="-1" autofocus>${text}: the subscription is now ${chip(s.status)}.
  <a href="/console/subscriptions/${s.id}">Open subscription</a></p>
</article>`;
}
