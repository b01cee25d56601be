import type { AttentionPage } from '../api-types';
import { chip, when } from '../format';
import { html, type Html } from '../../lib/html';

/**
 * What an operator does about each step that keeps failing, in a line (docs/operators/runbooks.md holds the
 * whole of it); a step not listed has the runbook's general line.
 */
const ADVICE: Record<string, string> = {
  recordTransition:
    'The projection cannot record the change. Refused for good (DATA_REFUSED, CONSTRAINT_REFUSED): nothing changed and the command was refused; read the SQLSTATE and constraint, fix the cause, then repeat the command. Still retrying: PostgreSQL answers but refuses this write (rights, a missing migration); the step lands by itself once that is fixed.',
  collectPayment:
    'The collection keeps failing at the processor: check the processor’s status; the collection goes on by itself, one charge at most.',
  closeSessions:
    'Open payment sessions could not be closed: close them at the processor; a payment that still arrives is held for a refund.',
  releaseCapacity:
    'The capacity of a create that recorded nothing could not be given back: the offering shows it committed until it is.',
};
const GENERAL = 'See docs/operators/runbooks.md, “A subscription needs attention”.';

/** Subscriptions whose last step failed, with the step, the failure and what to do (docs/decisions/0366-subscriptions-needing-attention.md). */
export function attentionBody({ items, next_cursor }: AttentionPage): Html {
  return html`<hgroup><h1>Needs attention</h1><p>Subscriptions whose last step failed for good or keeps failing, most recent first. An entry leaves the list when the subscription’s next change is recorded.</p></hgroup>
${
  items.length
    ? html`<div class="overflow-auto"><table class="striped" data-testid="attention">
  <thead><tr><th scope="col">Subscription</th><th scope="col">Status</th><th scope="col">Step</th><th scope="col">Failure</th><th scope="col">Attempts</th><th scope="col">Since</th><th scope="col">Last</th><th scope="col">What to do</th></tr></thead>
  <tbody>${items.map(
    (i) => html`<tr data-testid="attention-${i.subscription_id}">
    <th scope="row">${i.status === null ? html`<code>${i.subscription_id}</code>` : html`<a href="/console/subscriptions/${i.subscription_id}"><code>${i.subscription_id}</code></a>`}</th>
    <td>${i.status === null ? html`<span class="muted">never recorded</span>` : chip(i.status)}</td>
    <td data-testid="step"><code>${i.step}</code></td>
    <td data-testid="failure">${chip(i.failure.toLowerCase())}${i.sqlstate ? html` <span class="muted">SQLSTATE ${i.sqlstate}</span>` : ''}${i.constraint ? html` <span class="muted">${i.constraint}</span>` : ''}</td>
    <td class="amount">${i.failed_attempts}</td>
    <td>${when(i.first_failed_at)}</td>
    <td>${when(i.last_failed_at)}</td>
    <td><small>${ADVICE[i.step] ?? GENERAL}</small></td>
  </tr>`,
  )}</tbody></table></div>`
    : html`<p data-testid="attention-empty">No subscription needs attention.</p>`
}
${next_cursor ? html`<p><a href="/console/attention?cursor=${encodeURIComponent(next_cursor)}">Earlier failures</a></p>` : ''}`;
}
