import type { Endpoint } from '../api-types';
import { html, type Html } from '../../lib/html';
import { banner, type Notice } from '../layout';
import { formKeyField } from './form-key-view';
import { ORDERING } from './webhooks-view';
import { DEFAULT_PAYLOAD_VERSION, PAYLOAD_VERSIONS, versionStatus } from '../../domain/payload-versions';

/** What the register and edit forms hold, as typed (numbers stay text until sent). */
export interface EndpointDraft {
  url: string;
  description: string;
  eventTypes: string[];
  ordering: string;
  maxInFlight: string;
  rateLimitPerSecond: string;
  sendTraceparent: boolean;
  /** The payload version its deliveries are sent in (docs/decisions/0420-versioned-payloads.md). */
  payloadVersion: string;
}

export const draftOf = (e: Endpoint): EndpointDraft => ({
  url: e.url,
  description: e.description,
  eventTypes: e.eventTypes,
  ordering: e.ordering,
  maxInFlight: String(e.max_in_flight),
  rateLimitPerSecond: e.rate_limit_per_second === null ? '' : String(e.rate_limit_per_second),
  sendTraceparent: e.send_traceparent,
  payloadVersion: e.payload_version,
});

export const EMPTY_DRAFT: EndpointDraft = {
  url: '',
  description: '',
  eventTypes: [],
  ordering: 'none',
  maxInFlight: '',
  rateLimitPerSecond: '',
  sendTraceparent: false,
  payloadVersion: DEFAULT_PAYLOAD_VERSION,
};

/**
 * The register form (no `id`) or the edit form of endpoint `id`. Registering makes a signing secret, so
 * that form carries its Idempotency-Key (`formKey` when shown again for the same request, console/form-keys.ts).
 */
export function endpointForm(
  d: EndpointDraft,
  eventTypes: string[],
  opts: { id?: string; notice: Notice | null; formKey?: string },
): Html {
  const action = opts.id ? `/console/webhooks/${opts.id}/edit` : '/console/webhooks';
  const title = opts.id ? 'Edit endpoint' : 'Register an endpoint';
  const checkbox = (value: string, label: Html | string) =>
    html`<label><input type="checkbox" name="eventTypes" value="${value}" ${d.eventTypes.includes(value) ? 'checked' : ''}> ${label}</label>`;
  return html`<nav aria-label="Breadcrumb"><ul><li><a href="/console/webhooks">Webhooks</a></li><li>${title}</li></ul></nav>
<h1>${title}</h1>
${banner(opts.notice)}
<form method="post" action="${action}" class="endpoint-form" data-testid="endpoint-form">
  ${opts.id ? '' : formKeyField(opts.formKey)}
  <label for="url">URL</label>
  <input id="url" name="url" type="url" required maxlength="2048" value="${d.url}" placeholder="https://example.com/webhooks/tranche" aria-describedby="url-help">
  <small id="url-help">Deliveries are POSTed here over HTTPS.</small>
  <label for="description">Description <span class="muted">(optional)</span></label>
  <input id="description" name="description" maxlength="1000" value="${d.description}">
  <fieldset data-testid="event-types"><legend>Event types</legend>
    ${checkbox('*', html`<strong>All event types</strong> <code>*</code>, also those added later`)}
    ${eventTypes.map((t) => checkbox(t, html`<code>${t}</code>`))}
  </fieldset>
  <label for="ordering">Ordering</label>
  <select id="ordering" name="ordering">${Object.entries(ORDERING).map(([v, label]) => html`<option value="${v}" ${d.ordering === v ? 'selected' : ''}>${label}</option>`)}</select>
  <div class="grid">
    <div><label for="max_in_flight">Attempts in flight at most <span class="muted">(1-256)</span></label>
    <input id="max_in_flight" name="maxInFlight" type="number" min="1" max="256" value="${d.maxInFlight}" placeholder="the deployment’s default"></div>
    <div><label for="rate_limit">Deliveries per second at most <span class="muted">(empty: no limit)</span></label>
    <input id="rate_limit" name="rateLimitPerSecond" type="number" min="1" max="10000" value="${d.rateLimitPerSecond}"></div>
  </div>
  <label for="payload_version">Payload version</label>
  <select id="payload_version" name="payloadVersion" aria-describedby="payload-version-help" data-testid="payload-version-select">${PAYLOAD_VERSIONS.map((v) => html`<option value="${v}" ${d.payloadVersion === v ? 'selected' : ''}>${v}${v === '1' ? ' (the spec’s shape)' : ''}, ${versionStatus(v)}</option>`)}</select>
  <small id="payload-version-help">The shape of the events it receives; each version is in the <a href="/console/catalog">event catalog</a>. A change applies to events published afterwards.</small>
  <label><input type="checkbox" name="sendTraceparent" value="true" ${d.sendTraceparent ? 'checked' : ''}> Send a <code>traceparent</code> header <span class="muted">(W3C Trace Context of the event's trace; not signed)</span></label>
  <button type="submit" data-testid="save-endpoint">${opts.id ? 'Save' : 'Register'}</button>
</form>`;
}

/** Delete asks once more, on a page of its own, so it works without JavaScript. */
export function deleteConfirm(e: Endpoint, notice: Notice | null): Html {
  return html`<nav aria-label="Breadcrumb"><ul><li><a href="/console/webhooks">Webhooks</a></li><li><a href="/console/webhooks/${e.id}">Endpoint</a></li><li>Delete</li></ul></nav>
<h1>Delete ${e.url}?</h1>
${banner(notice)}
<p>The endpoint gets no more deliveries; the ones waiting on a retry stop. Its delivery history stays readable.
This cannot be undone: to pause deliveries instead, disable it.</p>
<form method="post" action="/console/webhooks/${e.id}/delete" class="actions">
  <button type="submit" class="contrast" data-testid="confirm-delete">Delete the endpoint</button>
  <a href="/console/webhooks/${e.id}" role="button" class="secondary outline">Keep it</a>
</form>`;
}
