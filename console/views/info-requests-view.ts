import type { SubscriptionView } from '../../domain/subscription-view';
import { when } from '../format';
import { html, type Html } from '../../lib/html';

/**
 * What staff asked and what the investor answered, beside each other, oldest first; an open
 * request is marked so a reviewer sees the subscription waits on the investor
 * (docs/decisions/0277-answering-an-information-request.md).
 */
export function infoRequests(s: SubscriptionView): Html {
  const asked = s.info_requests ?? [];
  // States from before answers kept only the open request's message.
  if (!asked.length && !s.info_requested) return html``;
  const items = asked.length
    ? asked
    : [
        {
          message: s.info_requested!,
          requested_at: s.updated_at,
          answer: null as NonNullable<(typeof asked)[number]['answer']> | null,
        },
      ];
  const open = Boolean(s.info_requested);
  return html`<section class="info-requests" data-testid="info-requests" aria-label="Information requests">
  ${open ? html`<p><span class="chip chip-pending" data-testid="info-unanswered">awaiting the investor's answer</span></p>` : ''}
  <ol>${items.map(
    (x) => html`<li data-testid="info-request">
    <p><strong>Asked</strong> <span class="muted">${when(x.requested_at)}</span>: <q>${x.message}</q></p>
    ${
      x.answer
        ? html`<p data-testid="info-answer"><strong>Answered</strong> <span class="muted">${when(x.answer.answered_at)}</span>: <q>${x.answer.message}</q></p>
    ${x.answer.document_references.length ? html`<ul class="muted">${x.answer.document_references.map((d) => html`<li><code>${d}</code></li>`)}</ul>` : ''}`
        : html`<p class="muted">No answer yet.</p>`
    }
  </li>`,
  )}</ol>
</section>`;
}
