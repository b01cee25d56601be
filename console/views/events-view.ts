import type { EventList } from '../api-types';
import { when } from '../format';
import { html, type Html } from '../../lib/html';
import { banner, type Notice } from '../layout';

const option = (value: string, label: string, chosen: string) =>
  html`<option value="${value}" ${value === chosen ? 'selected' : ''}>${label}</option>`;

/**
 * The events API as a page: every event of the organisation oldest first, as the envelope that was
 * (or would have been) delivered, each with a link to where it went (its deliveries).
 */
export function eventsBody(
  list: EventList,
  eventTypes: string[],
  opts: { eventType: string; next: string | null; notice: Notice | null },
): Html {
  return html`<hgroup><h1>Events</h1><p>Everything your organisation’s webhooks were sent, oldest first, as <code>GET /notifications/events</code> gives it to pull what a webhook missed.</p></hgroup>
<form method="get" action="/console/events" class="filters">
<label for="e-type">Event type</label>
<div role="group"><select id="e-type" name="event_type">${option('', 'Every event type', opts.eventType)}${eventTypes.map((t) => option(t, t, opts.eventType))}</select>
<button type="submit" data-testid="apply-event-filter">Show</button></div>
</form>
${banner(opts.notice)}
${
  list.items.length
    ? html`<div class="overflow-auto"><table class="striped" data-testid="events">
<caption class="visually-hidden">Events, oldest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Envelope</th><th scope="col">Where it went</th></tr></thead>
<tbody>${list.items.map(
        (
          e,
        ) => html`<tr data-testid="event-${e.event_id}"><td>${when(e.timestamp)}</td><td><code>${e.event_type}</code></td>
<td><details><summary><code>${e.event_id.slice(0, 8)}</code></summary><pre class="wrap" tabindex="0" aria-label="Envelope of event ${e.event_id}"><code>${JSON.stringify(e, null, 2)}</code></pre></details></td>
<td><a href="/console/deliveries?event_id=${e.event_id}" data-testid="event-deliveries">Deliveries<span class="visually-hidden"> of event ${e.event_id}</span></a></td></tr>`,
      )}</tbody></table></div>`
    : html`<p data-testid="no-events">No events${opts.eventType ? ' of this type' : ''} yet.</p>`
}
${opts.next ? html`<p><a href="${opts.next}" data-testid="later-events">Later events</a></p>` : ''}`;
}
