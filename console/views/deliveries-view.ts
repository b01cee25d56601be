import type { DeliveryDetail, DeliveryList, Endpoint } from '../api-types';
import { chip, when } from '../format';
import { html, type Html } from '../../lib/html';
import { banner, type Notice } from '../layout';
import type { TemporalLinks } from '../links';
import { cutToCodePoints } from '../../lib/text';

const STATUSES = ['pending', 'success', 'failed', 'exhausted'];

/** The explorer's filters as the person typed them; `from`/`to` are datetime-local values, read as UTC. */
export interface DeliveryFilters {
  endpoint_id: string;
  status: string;
  event_type: string;
  /** One event's deliveries, from the events view. */
  event_id: string;
  from: string;
  to: string;
}

const option = (value: string, label: string, chosen: string) =>
  html`<option value="${value}" ${value === chosen ? 'selected' : ''}>${label}</option>`;

function filterForm(f: DeliveryFilters, endpoints: Endpoint[], eventTypes: string[]): Html {
  return html`<form method="get" action="/console/deliveries" class="filters" data-testid="delivery-filters">
<div class="grid">
  <div><label for="f-endpoint">Endpoint</label><select id="f-endpoint" name="endpoint_id">${option('', 'Any endpoint', f.endpoint_id)}${endpoints.map((e) => option(e.id, e.url, f.endpoint_id))}</select></div>
  <div><label for="f-status">Status</label><select id="f-status" name="status">${option('', 'Any status', f.status)}${STATUSES.map((s) => option(s, s, f.status))}</select></div>
  <div><label for="f-type">Event type</label><select id="f-type" name="event_type">${option('', 'Any event type', f.event_type)}${eventTypes.map((t) => option(t, t, f.event_type))}</select></div>
</div>
${f.event_id ? html`<p data-testid="event-filter">Deliveries of event <code>${f.event_id}</code><input type="hidden" name="event_id" value="${f.event_id}"> · <a href="/console/events">Events</a></p>` : ''}
<div class="grid">
  <div><label for="f-from">Created from (UTC)</label><input id="f-from" name="from" type="datetime-local" value="${f.from}"></div>
  <div><label for="f-to">Created before (UTC)</label><input id="f-to" name="to" type="datetime-local" value="${f.to}"></div>
</div>
<div class="actions"><button type="submit" data-testid="apply-filters">Show deliveries</button><a href="/console/deliveries" role="button" class="secondary outline">Clear</a></div>
</form>`;
}

export function explorerBody(
  f: DeliveryFilters,
  list: DeliveryList,
  endpoints: Endpoint[],
  eventTypes: string[],
  opts: { next: string | null; notice: Notice | null },
): Html {
  const urls = new Map(endpoints.map((e) => [e.id, e.url]));
  return html`<hgroup><h1>Deliveries</h1><p>Every webhook delivery of your organisation, newest first.</p></hgroup>
${filterForm(f, endpoints, eventTypes)}
${banner(opts.notice)}
${
  list.items.length
    ? html`<div class="overflow-auto"><table class="striped" data-testid="deliveries">
<caption class="visually-hidden">Deliveries matching the filters, newest first</caption>
<thead><tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Next attempt</th></tr></thead>
<tbody>${list.items.map(
        (
          d,
        ) => html`<tr data-testid="delivery-${d.id}"><td><a href="/console/deliveries/${d.id}">${when(d.created_at)}<span class="visually-hidden"> delivery ${d.id}</span></a></td>
<td><code>${d.event_type}</code></td><td><small>${urls.get(d.endpoint_id) ?? html`<span class="muted">deleted endpoint</span>`}</small></td>
<td>${chip(d.status)}</td><td>${d.attempt_count}</td><td>${when(d.next_attempt_at)}</td></tr>`,
      )}</tbody></table></div>`
    : html`<p data-testid="no-deliveries">No delivery matches these filters.</p>`
}
${opts.next ? html`<p><a href="${opts.next}" data-testid="older-deliveries">Older deliveries</a></p>` : ''}`;
}

function attemptsTable(d: DeliveryDetail): Html {
  if (!d.attempts.length) return html`<p>No attempt yet.</p>`;
  return html`<div class="overflow-auto"><table class="striped" data-testid="attempts">
<caption class="visually-hidden">Every attempt of this delivery, first first</caption>
<thead><tr><th scope="col">#</th><th scope="col">Sent</th><th scope="col">Duration</th><th scope="col">Response</th><th scope="col">Answer (first 4 KB)</th></tr></thead>
<tbody>${d.attempts.map(
    (
      a,
    ) => html`<tr><td>${a.number}</td><td>${when(a.attempted_at)}</td><td>${a.duration_ms === null ? 'in flight' : `${a.duration_ms} ms`}</td>
<td data-testid="attempt-response">${a.response_status ?? html`<span class="muted">${a.error ?? 'no answer'}</span>`}</td>
<td>${a.response_body ? html`<details><summary>${cutToCodePoints(a.response_body, 60)}</summary><pre tabindex="0" aria-label="Answer of attempt ${a.number}"><code>${a.response_body}</code></pre></details>` : html`<span class="muted">—</span>`}</td></tr>`,
  )}</tbody></table></div>`;
}

/**
 * What the endpoint received: each attempt's headers as that attempt sent them (its signature and
 * timestamp headers are made at each send), and the one body every attempt sent, byte for byte.
 */
function signedRequest(d: DeliveryDetail): Html {
  const last = d.attempts[d.attempts.length - 1];
  return html`<section aria-labelledby="signed-h"><h2 id="signed-h">What was signed and sent</h2>
${d.attempts.map(
  (
    a,
  ) => html`<details data-testid="attempt-headers-${a.number}" ${a === last ? 'open' : ''}><summary>Headers of attempt ${a.number}</summary>
${
  a.request_headers
    ? html`<pre class="wrap" data-testid="request-headers" tabindex="0" aria-label="Request headers of attempt ${a.number}"><code>${Object.entries(
        a.request_headers,
      )
        .map(([name, value]) => `${name}: ${value}`)
        .join('\n')}</code></pre>`
    : html`<p class="muted">Nothing kept: ${a.error ?? (a.duration_ms === null ? 'the attempt is in flight' : 'sent before headers were kept')}.</p>`
}</details>`,
)}
<p class="muted">Every attempt sent this body; <code>X-Service-Signature</code> signs it alone, <code>webhook-signature</code>
signs <code>webhook-id.webhook-timestamp.body</code>.</p>
${d.signed_body ? html`<pre class="wrap" data-testid="signed-body" tabindex="0" aria-label="Signed body"><code>${d.signed_body}</code></pre>` : html`<p>The body is rendered at the first attempt.</p>`}
</section>`;
}

export function deliveryBody(
  d: DeliveryDetail,
  endpoint: Endpoint | null,
  links: TemporalLinks,
  notice: Notice | null,
): Html {
  const retryable = d.status === 'failed' || d.status === 'exhausted';
  return html`<nav aria-label="Breadcrumb"><ul><li><a href="/console/deliveries">Deliveries</a></li><li>Delivery</li></ul></nav>
<hgroup><h1>Delivery <code>${d.id.slice(0, 8)}</code></h1><p><code>${d.event_type}</code> to ${endpoint ? html`<a href="/console/webhooks/${endpoint.id}">${endpoint.url}</a>` : 'a deleted endpoint'}</p></hgroup>
${banner(notice)}
<dl class="facts">
  <div><dt>Status</dt><dd data-testid="delivery-status">${chip(d.status)}</dd></div>
  <div><dt>Attempts</dt><dd>${d.attempt_count}</dd></div>
  <div><dt>Created</dt><dd>${when(d.created_at)}</dd></div>
  <div><dt>Next attempt</dt><dd data-testid="next-attempt">${when(d.next_attempt_at)}</dd></div>
  <div><dt>Workflow</dt><dd><a href="${links.delivery(d.id)}" target="_blank" rel="noopener" data-testid="delivery-workflow-link">Open in Temporal<span class="visually-hidden"> (new tab)</span></a></dd></div>
</dl>
${
  retryable
    ? html`<form method="post" action="/console/deliveries/${d.id}/retry"><button type="submit" data-testid="retry-delivery">Retry now</button></form>`
    : ''
}
<section aria-labelledby="attempts-h"><h2 id="attempts-h">Attempts</h2>${attemptsTable(d)}</section>
${signedRequest(d)}`;
}
