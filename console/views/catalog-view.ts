import type { Endpoint, EventCatalog } from '../api-types';
import { html, type Html } from '../../lib/html';
import { banner, type Notice } from '../layout';

type Entry = EventCatalog['items'][number];

const WHO: Record<Entry['delivered_to'], string> = {
  subscribers: 'Endpoints subscribed to it or to every type (*)',
  named_only: 'Only endpoints that name it',
  test_path: 'Only the test button of an endpoint',
};

/** Whether an endpoint gets this type: named, or `*` for a type that `*` covers. */
const gets = (e: Endpoint, t: Entry) =>
  e.eventTypes.includes(t.event_type) || (t.delivered_to === 'subscribers' && e.eventTypes.includes('*'));

const anchor = (type: string) => `type-${type.replace(/[^a-z0-9]+/g, '-')}`;

/**
 * The event catalog (docs/decisions/0397-event-catalog.md): each type with who gets it, since when it exists,
 * its schema and example per payload version (docs/decisions/0420-versioned-payloads.md), the organisation's endpoints that get it, and a form that sends the example to one
 * of its enabled endpoints through the test path.
 */
export function catalogBody(catalog: Entry[], endpoints: Endpoint[], notice: Notice | null): Html {
  const enabled = endpoints.filter((e) => e.status === 'enabled');
  return html`<hgroup><h1>Event catalog</h1><p>Every event type this service sends, as <code>GET /notifications/event-catalog</code> gives it: the JSON Schema of its envelope and an example, for each payload version.</p></hgroup>
${banner(notice)}
<p class="type-index" aria-label="Event types">Jump to: ${catalog.map((t, i) => html`${i ? ' · ' : ''}<a href="#${anchor(t.event_type)}"><code>${t.event_type}</code></a>`)}</p>
${catalog.map((t) => {
  const subscribed = endpoints.filter((e) => gets(e, t));
  const id = anchor(t.event_type);
  return html`<article id="${id}" data-testid="catalog-${t.event_type}" aria-labelledby="${id}-h">
<h2 id="${id}-h"><code>${t.event_type}</code></h2>
<p>${WHO[t.delivered_to]}. Since ${t.introduced_by}. <span data-testid="versions-${t.event_type}">Payload versions: ${t.versions.map((v, i) => html`${i ? ', ' : ''}${v.version} (${v.status}${v.sunset_at ? `, served until ${v.sunset_at}` : ''})`)}</span>; the example and schema below are version 1's, the spec's shape.</p>
<p>Endpoints that get it: ${
    subscribed.length
      ? html`${subscribed.map((e, i) => html`${i ? ', ' : ''}<a href="/console/webhooks/${e.id}">${e.description || e.url}</a>`)}`
      : html`<span data-testid="no-subscribers">none</span>`
  }</p>
<details><summary>Example</summary><pre class="wrap" tabindex="0" aria-label="Example of ${t.event_type}"><code>${JSON.stringify(t.example, null, 2)}</code></pre></details>
<details><summary>JSON Schema</summary><pre class="wrap" tabindex="0" aria-label="JSON Schema of ${t.event_type}"><code>${JSON.stringify(t.schema, null, 2)}</code></pre></details>
${t.versions
  .filter((v) => v.version !== '1')
  .map(
    (
      v,
    ) => html`<details data-testid="version-${t.event_type}-${v.version}"><summary>Version ${v.version} example</summary><pre class="wrap" tabindex="0" aria-label="${t.event_type} in payload version ${v.version}: example"><code>${JSON.stringify(v.example, null, 2)}</code></pre></details>
<details><summary>Version ${v.version} JSON Schema</summary><pre class="wrap" tabindex="0" aria-label="${t.event_type} in payload version ${v.version}: JSON Schema"><code>${JSON.stringify(v.schema, null, 2)}</code></pre></details>`,
  )}
${
  enabled.length
    ? html`<form method="post" action="/console/catalog/send">
<input type="hidden" name="event_type" value="${t.event_type}">
<label for="${id}-to">Send this example, in the endpoint’s payload version, to</label>
<div role="group"><select id="${id}-to" name="endpoint_id">${enabled.map((e) => html`<option value="${e.id}">${e.description || e.url} (version ${e.payload_version})</option>`)}</select>
<button type="submit" data-testid="send-example-${t.event_type}">Send the example</button></div>
</form>`
    : ''
}
</article>`;
})}`;
}
