import type { Endpoint, Recovery } from '../api-types';
import { chip, when } from '../format';
import { html, type Html } from '../../lib/html';
import { banner, type Notice } from '../layout';

const base = (endpointId: string) => `/console/webhooks/${endpointId}/recoveries`;

/** The form on the endpoint page: redeliver what failed in a time range (to now unless an end is given). */
export function recoveryForm(endpointId: string): Html {
  return html`<details class="command"><summary role="button" class="secondary outline" data-testid="recovery-open">Recover failed deliveries…</summary>
<form method="post" action="${base(endpointId)}">
<fieldset><legend>What to send</legend>
<label><input type="radio" name="mode" value="failed" checked> Retry failed and exhausted deliveries</label>
<label><input type="radio" name="mode" value="missing" aria-describedby="recover-missing-help"> Also deliver the events it never received</label>
<small id="recover-missing-help">Events it subscribes to that were published while it was disabled, or before it existed, are
sent first, in the order they were published; only as far back as events are kept.</small>
</fieldset>
<label for="recover-since">Created from (UTC)</label>
<input id="recover-since" name="since" type="datetime-local" required aria-describedby="recover-help">
<label for="recover-until">Until (UTC, optional)</label>
<input id="recover-until" name="until" type="datetime-local" aria-describedby="recover-help">
<small id="recover-help">Every such delivery created in this range (until now when no end is given) is retried once
more, oldest first. Deliveries that succeeded meanwhile are skipped.</small>
<button type="submit" data-testid="start-recovery">Start the recovery</button>
</form></details>`;
}

const live = (r: Recovery) => r.status === 'running' || r.status === 'cancelling';

/**
 * A recovery's progress. While it runs the block asks for itself again every second (htmx) and
 * stops once it has finished; without JavaScript, a link reloads the page. The Cancel form is kept
 * across those swaps (hx-preserve), so a click that spans one is not lost to a new button.
 */
export function progressBlock(r: Recovery): Html {
  const self = `${base(r.endpoint_id)}/${r.id}`;
  const processed = r.done + r.skipped;
  return html`<section id="recovery" aria-labelledby="progress-h" data-testid="recovery" ${live(r) ? html`hx-get="${self}" hx-trigger="every 1s" hx-headers='{"X-Console-Poll": "1"}' hx-select="#recovery" hx-swap="outerHTML"` : ''}>
<h2 id="progress-h">Progress</h2>
<p>Status: <span data-testid="recovery-status">${chip(r.status)}</span></p>
<progress value="${processed}" max="${Math.max(r.total, 1)}" aria-label="Deliveries processed"></progress>
<p class="progress-figures" data-testid="recovery-figures">${processed} of ${r.total} processed: ${r.done} ${r.mode === 'missing' ? 'sent or retried' : 'retried'}, ${r.skipped} skipped (succeeded or already pending).</p>
${
  live(r)
    ? html`<form method="post" action="${self}/cancel" id="cancel-${r.id}" hx-preserve><button type="submit" class="contrast" data-testid="cancel-recovery" ${r.status === 'cancelling' ? 'disabled' : ''}>Cancel the recovery</button></form>
<noscript><p><a href="${self}">Check again</a></p></noscript>`
    : html`<p>Finished ${when(r.finished_at)}.</p>`
}
</section>`;
}

export function recoveryBody(e: Endpoint, r: Recovery, notice: Notice | null): Html {
  return html`<nav aria-label="Breadcrumb"><ul><li><a href="/console/webhooks">Webhooks</a></li><li><a href="/console/webhooks/${e.id}">Endpoint</a></li><li>Recovery</li></ul></nav>
<hgroup><h1>Recovery of ${e.url}</h1><p>${r.mode === 'missing' ? 'Events never received, then failed' : 'Failed'} and exhausted deliveries created from ${when(r.since)} to ${when(r.until)}.</p></hgroup>
${banner(notice)}
${progressBlock(r)}`;
}

/** A recovery's bar and figures, in a row of the list or on its own page. */
function progress(r: Recovery): Html {
  const processed = r.done + r.skipped;
  return html`<progress value="${processed}" max="${Math.max(r.total, 1)}" aria-label="Deliveries processed by recovery ${r.id.slice(0, 8)}"></progress>
<small data-testid="list-figures">${processed} of ${r.total} processed: ${r.done} retried, ${r.skipped} skipped</small>`;
}

/**
 * An endpoint's recoveries, newest first, a cursor page at a time. While one of them runs the
 * table asks for itself again every second (htmx); a running one can be cancelled from its row, its
 * form kept across the swaps (hx-preserve) so a click that spans one is not lost.
 */
export function recoveryListBody(
  e: Endpoint,
  list: { items: Recovery[]; next_cursor: string | null },
  self: string,
  notice: Notice | null,
): Html {
  const polling = list.items.some(live);
  return html`<nav aria-label="Breadcrumb"><ul><li><a href="/console/webhooks">Webhooks</a></li><li><a href="/console/webhooks/${e.id}">Endpoint</a></li><li>Recoveries</li></ul></nav>
<hgroup><h1>Recoveries of ${e.url}</h1><p>Bulk redeliveries of failed and exhausted deliveries, newest first.</p></hgroup>
${banner(notice)}
<div id="recoveries" ${polling ? html`hx-get="${self}" hx-trigger="every 1s" hx-headers='{"X-Console-Poll": "1"}' hx-select="#recoveries" hx-swap="outerHTML"` : ''}>
${
  list.items.length
    ? html`<div class="overflow-auto"><table class="striped" data-testid="recoveries">
<caption class="visually-hidden">Recoveries of this endpoint, newest first</caption>
<thead><tr><th scope="col">Started</th><th scope="col">Deliveries created</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Action</th></tr></thead>
<tbody>${list.items.map(
        (r) => html`<tr data-testid="recovery-${r.id}">
<td><a href="${base(e.id)}/${r.id}">${when(r.created_at)}</a></td><td>${when(r.since)} to ${when(r.until)}</td>
<td data-testid="list-status">${chip(r.status)}</td><td>${progress(r)}</td>
<td>${
          live(r)
            ? html`<form method="post" action="${base(e.id)}/${r.id}/cancel" id="cancel-${r.id}" hx-preserve><input type="hidden" name="back" value="list">
<button type="submit" class="contrast" data-testid="list-cancel" ${r.status === 'cancelling' ? 'disabled' : ''}>Cancel<span class="visually-hidden"> recovery ${r.id.slice(0, 8)}</span></button></form>`
            : html`<span class="muted">Finished ${when(r.finished_at)}</span>`
        }</td></tr>`,
      )}</tbody></table></div>`
    : html`<p data-testid="no-recoveries">No recovery of this endpoint yet.</p>`
}
${polling ? html`<noscript><p><a href="${self}">Check again</a></p></noscript>` : ''}
</div>
${list.next_cursor ? html`<p><a href="${base(e.id)}?cursor=${encodeURIComponent(list.next_cursor)}" data-testid="older-recoveries">Older recoveries</a></p>` : ''}`;
}
