import type { Endpoint, Recovery } from '../api-types';
import { chip, when } from '../format';
import { html, type Html } from '../html';
import { banner, type Notice } from '../layout';

const base = (endpointId: string) => `/console/webhooks/${endpointId}/recoveries`;

/** The form on the endpoint page: redeliver what failed since a time (the range ends when it starts). */
export function recoveryForm(endpointId: string): Html {
  return html`<details class="command"><summary role="button" class="secondary outline" data-testid="recovery-open">Recover failed deliveries…</summary>
<form method="post" action="${base(endpointId)}">
<label for="recover-since">Failed or exhausted deliveries created from (UTC)</label>
<input id="recover-since" name="since" type="datetime-local" required aria-describedby="recover-help">
<small id="recover-help">Every such delivery created between this time and now is retried once more, oldest first.
Deliveries that succeeded meanwhile are skipped.</small>
<button type="submit" data-testid="start-recovery">Start the recovery</button>
</form></details>`;
}

const live = (r: Recovery) => r.status === 'running' || r.status === 'cancelling';

/**
 * A recovery's progress. While it runs the block asks for itself again every second (htmx) and
 * stops once it has finished; without JavaScript, a link reloads the page.
 */
export function progressBlock(r: Recovery): Html {
  const self = `${base(r.endpoint_id)}/${r.id}`;
  const processed = r.done + r.skipped;
  return html`<section id="recovery" aria-labelledby="progress-h" data-testid="recovery" ${live(r) ? html`hx-get="${self}" hx-trigger="every 1s" hx-headers='{"X-Console-Poll": "1"}' hx-select="#recovery" hx-swap="outerHTML"` : ''}>
<h2 id="progress-h">Progress</h2>
<p>Status: <span data-testid="recovery-status">${chip(r.status)}</span></p>
<progress value="${processed}" max="${Math.max(r.total, 1)}" aria-label="Deliveries processed"></progress>
<p class="progress-figures" data-testid="recovery-figures">${processed} of ${r.total} processed: ${r.done} retried, ${r.skipped} skipped (succeeded or already pending).</p>
${
  live(r)
    ? html`<form method="post" action="${self}/cancel"><button type="submit" class="contrast" data-testid="cancel-recovery" ${r.status === 'cancelling' ? 'disabled' : ''}>Cancel the recovery</button></form>
<noscript><p><a href="${self}">Check again</a></p></noscript>`
    : html`<p>Finished ${when(r.finished_at)}.</p>`
}
</section>`;
}

export function recoveryBody(e: Endpoint, r: Recovery, notice: Notice | null): Html {
  return html`<nav aria-label="Breadcrumb"><ul><li><a href="/console/webhooks">Webhooks</a></li><li><a href="/console/webhooks/${e.id}">Endpoint</a></li><li>Recovery</li></ul></nav>
<hgroup><h1>Recovery of ${e.url}</h1><p>Failed and exhausted deliveries created from ${when(r.since)} to ${when(r.until)}.</p></hgroup>
${banner(notice)}
${progressBlock(r)}`;
}
