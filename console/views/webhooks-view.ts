import { chip, when } from '../format';
import { html, type Html } from '../../lib/html';
import { banner, type Notice } from '../layout';
import type { TemporalLinks } from '../links';
import type { Endpoint, EndpointHealth } from '../api-types';

/** The endpoint's limits as one line: "32 at once, 5/s". */
export const limits = (e: Endpoint) =>
  `${e.max_in_flight} at once${e.rate_limit_per_second === null ? '' : `, ${e.rate_limit_per_second}/s`}`;
export const circuit = (e: Endpoint) =>
  e.circuit.state === 'closed'
    ? chip('closed')
    : html`${chip(e.circuit.state)}<br><small>${e.circuit.consecutive_failures} failures in a row${
        e.circuit.next_probe_at ? html`, next probe ${when(e.circuit.next_probe_at)}` : ''
      }</small>`;

const percent = (r: number | null) => (r === null ? 'no attempts' : `${(r * 100).toFixed(1)} %`);

export function endpointsBody(
  rows: { endpoint: Endpoint; health: EndpointHealth | null }[],
  notice: Notice | null,
): Html {
  return html`<hgroup><h1>Webhooks</h1><p>Your endpoints, their delivery success over the last 24 hours, limits and state.</p></hgroup>
${banner(notice)}
<p><a href="/console/webhooks/new" role="button" data-testid="register-endpoint">Register an endpoint</a></p>
${
  rows.length
    ? html`<div class="overflow-auto"><table class="striped" data-testid="endpoints">
<caption class="visually-hidden">Webhook endpoints</caption>
<thead><tr><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Events</th><th scope="col">Success (24 h)</th><th scope="col">Attempts</th><th scope="col">Waiting on retry</th><th scope="col">Limits</th><th scope="col">Circuit</th><th scope="col">Ordering</th></tr></thead>
<tbody>${rows.map(
        ({ endpoint: e, health: h }) => html`<tr>
<td><a href="/console/webhooks/${e.id}">${e.url}</a>${e.description ? html`<br><small class="muted">${e.description}</small>` : ''}</td>
<td data-testid="status">${chip(e.status)}</td><td><small>${e.eventTypes.join(', ')}</small></td>
<td>${h ? percent(h.success_rate) : '—'}</td><td>${h?.attempts ?? '—'}</td><td>${h?.waiting_on_retry.length ?? '—'}</td>
<td data-testid="limits">${limits(e)}</td><td data-testid="circuit">${circuit(e)}</td><td>${ORDERING[e.ordering]}</td></tr>`,
      )}</tbody>
</table></div>`
    : html`<p>No webhook endpoints are registered.</p>`
}`;
}

export const ORDERING = { none: 'Any order', per_subscription: 'In order per subscription' } as const;

/** The windows the health page offers, as the health route's query. */
export const WINDOWS = {
  '1h': { label: 'Last hour', hours: 1, bucket: 5 },
  '24h': { label: 'Last 24 hours', hours: 24, bucket: 60 },
  '7d': { label: 'Last 7 days', hours: 168, bucket: 360 },
} as const;
export type WindowName = keyof typeof WINDOWS;

export function endpointBody(
  e: Endpoint,
  h: EndpointHealth,
  links: TemporalLinks,
  notice: Notice | null,
  window: WindowName,
  manage: Html,
): Html {
  const points = h.series.map((b) => ({
    t: b.start,
    rate: b.success_rate === null ? null : Math.round(b.success_rate * 1000) / 10,
    attempts: b.attempts,
    succeeded: b.succeeded,
  }));
  const summary = `Success rate ${percent(h.success_rate)} over ${h.attempts} attempts, ${WINDOWS[window].label.toLowerCase()}, per ${h.bucket_minutes} minutes.`;
  return html`<nav aria-label="Breadcrumb"><ul><li><a href="/console/webhooks">Webhooks</a></li><li>Endpoint</li></ul></nav>
<hgroup><h1>${e.url}</h1><p>${e.description || 'No description'} · events: ${e.eventTypes.join(', ')}</p></hgroup>
${banner(notice)}
${manage}
<section aria-labelledby="rate-h"><h2 id="rate-h">Success rate over time</h2>
<nav aria-label="Time window"><ul>${Object.entries(WINDOWS).map(([name, w]) => html`<li><a href="/console/webhooks/${e.id}?window=${name}" ${name === window ? html`aria-current="true"` : ''}>${w.label}</a></li>`)}</ul></nav>
<p data-testid="success-summary">${summary}</p>
<div class="chart-box"><canvas id="success-chart" role="img" aria-label="${summary}" data-series="${JSON.stringify(points)}"></canvas></div>
<details><summary>Chart data as a table</summary>
<table class="striped"><caption class="visually-hidden">Attempts and success rate per interval</caption>
<thead><tr><th scope="col">From</th><th scope="col">Attempts</th><th scope="col">Succeeded</th><th scope="col">Success rate</th></tr></thead>
<tbody>${h.series.filter((b) => b.attempts).map((b) => html`<tr><td>${when(b.start)}</td><td>${b.attempts}</td><td>${b.succeeded}</td><td>${percent(b.success_rate)}</td></tr>`)}</tbody></table>
</details></section>
<section aria-labelledby="waiting-h"><h2 id="waiting-h">Waiting on a retry</h2>
${
  h.waiting_on_retry.length
    ? html`<div class="overflow-auto"><table class="striped" data-testid="waiting">
<caption class="visually-hidden">Deliveries whose next attempt is scheduled</caption>
<thead><tr><th scope="col">Delivery</th><th scope="col">Event</th><th scope="col">Attempts so far</th><th scope="col">Next attempt</th><th scope="col">Workflow</th><th scope="col">Action</th></tr></thead>
<tbody>${h.waiting_on_retry.map(
        (d) => html`<tr id="retry-${d.id}">
<td><code>${d.id.slice(0, 8)}</code></td><td><code>${d.event_type}</code></td><td>${d.attempt_count} of 8</td><td>${when(d.next_attempt_at)}</td>
<td>${workflowLink(links, d.id)}</td><td>${retryForm(e.id, d.id)}</td></tr>`,
      )}</tbody>
</table></div>`
    : html`<p data-testid="none-waiting">No delivery is waiting on a retry.</p>`
}
</section>
<section aria-labelledby="failures-h"><h2 id="failures-h">Recent failures</h2>
${
  h.recent_failures.length
    ? html`<div class="overflow-auto"><table class="striped" data-testid="failures">
<caption class="visually-hidden">Latest failed attempts, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Delivery</th><th scope="col">Event</th><th scope="col">Attempt</th><th scope="col">Response</th><th scope="col">Delivery status</th><th scope="col">Workflow</th><th scope="col">Action</th></tr></thead>
<tbody>${h.recent_failures.map(
        (f) => html`<tr id="retry-${f.delivery_id}-${f.attempt}">
<td>${when(f.attempted_at)}</td><td><code>${f.delivery_id.slice(0, 8)}</code></td><td><code>${f.event_type}</code></td><td>${f.attempt}</td>
<td data-testid="response">${f.response_status ?? html`<span class="muted">${f.error ?? 'no answer'}</span>`}</td><td>${chip(f.delivery_status)}</td>
<td>${workflowLink(links, f.delivery_id)}</td>
<td>${f.delivery_status === 'failed' || f.delivery_status === 'exhausted' ? retryForm(e.id, f.delivery_id, `retry-${f.delivery_id}-${f.attempt}`) : ''}</td></tr>`,
      )}</tbody>
</table></div>`
    : html`<p>No failed attempts.</p>`
}
</section>`;
}

const workflowLink = (links: TemporalLinks, deliveryId: string) =>
  html`<a href="${links.delivery(deliveryId)}" target="_blank" rel="noopener" data-testid="delivery-workflow-link">Open<span class="visually-hidden"> workflow of delivery ${deliveryId} (new tab)</span></a>`;

function retryForm(endpointId: string, deliveryId: string, rowId = `retry-${deliveryId}`): Html {
  return html`<form method="post" action="/console/webhooks/deliveries/${deliveryId}/retry"
    hx-post="/console/webhooks/deliveries/${deliveryId}/retry" hx-target="#${rowId}" hx-select="#${rowId}" hx-swap="outerHTML">
    <input type="hidden" name="endpoint_id" value="${endpointId}"><input type="hidden" name="row" value="${rowId}">
    <button type="submit" class="secondary" data-testid="retry-${deliveryId}">Retry now</button></form>`;
}

/** What replaces a delivery's row after a retry was asked for (htmx). */
export function retriedRow(rowId: string, notice: Notice): Html {
  return html`<tr id="${rowId}"><td colspan="8">${banner(notice)}</td></tr>`;
}
