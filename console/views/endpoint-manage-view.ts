import type { DeliveryDetail, Endpoint } from '../api-types';
import { chip, when } from '../format';
import { html, type Html } from '../../lib/html';
import { recoveryForm } from './recovery-view';
import { formKeyField } from './form-key-view';
import { authenticationFacts } from './endpoint-authentication-view';
import { headersFacts } from './endpoint-headers-view';
import { circuit, limits, ORDERING } from './webhooks-view';
import { isPayloadVersion, PAYLOAD_VERSION_SUNSETS } from '../../domain/payload-versions';

/** A deprecated pin says until when it is served (docs/decisions/0420-versioned-payloads.md). */
const versionNote = (v: string) =>
  isPayloadVersion(v) && PAYLOAD_VERSION_SUNSETS[v]
    ? html` <small class="muted">deprecated, served until ${PAYLOAD_VERSION_SUNSETS[v]}</small>`
    : '';

/** How long the replaced secret keeps signing after a rotation, in words ("24 hours"). */
export function overlapWords(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
  if (seconds % 60 === 0) return `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}

/**
 * The endpoint's settings and every action on it; each action is a plain form, htmx only for the ping.
 * Rotating makes a secret, so its form carries an Idempotency-Key (`rotateKey` when shown again for the
 * same request, console/form-keys.ts).
 */
export function manageSection(e: Endpoint, overlapSeconds: number, rotateKey?: string): Html {
  const base = `/console/webhooks/${e.id}`;
  const enabled = e.status === 'enabled';
  return html`<section aria-labelledby="manage-h"><h2 id="manage-h">Settings</h2>
<dl class="facts" data-testid="settings">
  <div><dt>Status</dt><dd data-testid="endpoint-status">${chip(e.status)}${e.disabled_reason ? html` <small class="muted">${e.disabled_reason}, ${when(e.disabled_at)}</small>` : ''}</dd></div>
  <div><dt>Circuit</dt><dd>${circuit(e)}</dd></div>
  <div><dt>Limits</dt><dd>${limits(e)}</dd></div>
  <div><dt>Ordering</dt><dd>${ORDERING[e.ordering]}</dd></div>
  <div><dt>Authentication</dt><dd data-testid="authentication">${authenticationFacts(e)} <a href="${base}/authentication" data-testid="authentication-link">Change…</a></dd></div>
  <div><dt>Headers</dt><dd data-testid="headers">${headersFacts(e)} <a href="${base}/headers" data-testid="headers-link">Change…</a></dd></div>
  <div><dt>Payload filter</dt><dd data-testid="filter">${e.filter ? html`<code class="wrap">${JSON.stringify(e.filter)}</code>` : 'none: every event it subscribes to'}</dd></div>
  <div><dt>Payload version</dt><dd data-testid="payload-version">${e.payload_version}${versionNote(e.payload_version)} <a href="${base}/edit" data-testid="payload-version-link">Change…</a></dd></div>
  <div><dt>Previous secret signs until</dt><dd data-testid="previous-secret">${when(e.previous_secret_expires_at)}</dd></div>
</dl>
<div class="actions">
  <a href="${base}/edit" role="button" class="secondary" data-testid="edit">Edit</a>
  <form method="post" action="${base}/status" class="inline-form">
    <input type="hidden" name="status" value="${enabled ? 'disabled' : 'enabled'}">
    <button type="submit" class="secondary" data-testid="${enabled ? 'disable' : 'enable'}">${enabled ? 'Disable' : 'Re-enable'}</button>
  </form>
  ${
    enabled
      ? html`<form method="post" action="${base}/test" hx-post="${base}/test" hx-target="#ping" hx-select="#ping" hx-swap="outerHTML" class="inline-form">
    <button type="submit" data-testid="send-ping">Send a test ping</button></form>`
      : ''
  }
  <a href="${base}/delete" role="button" class="contrast outline" data-testid="delete">Delete…</a>
</div>
<div id="ping"></div>
<details class="command"><summary role="button" class="secondary outline" data-testid="rotate-open">Rotate the signing secret…</summary>
<p>A new secret is made and shown once. For ${overlapWords(overlapSeconds)} every delivery’s
<code>webhook-signature</code> carries a signature with the new and with the replaced secret, so receivers
that verify the Standard Webhooks scheme keep working while you deploy the new one.
<code>X-Service-Signature</code> (the spec scheme) uses the new secret at once.</p>
<form method="post" action="${base}/rotate-secret">${formKeyField(rotateKey)}<button type="submit" class="contrast" data-testid="rotate">Rotate the secret</button></form>
</details>
${enabled ? recoveryForm(e.id) : ''}
<p><a href="${base}/recoveries" data-testid="recoveries-link">Recoveries of this endpoint</a></p>
</section>`;
}

/**
 * A test ping's delivery as it happens. While it is pending the block asks for itself again every
 * second (htmx) and stops once the delivery has an outcome; without JavaScript, a link reloads it.
 */
export function pingBlock(endpointId: string, d: DeliveryDetail): Html {
  const self = `/console/webhooks/${endpointId}/pings/${d.id}`;
  const pending = d.status === 'pending';
  const last = d.attempts[d.attempts.length - 1];
  const answer = last
    ? html` The endpoint answered <strong data-testid="ping-response">${last.response_status ?? last.error ?? 'nothing'}</strong>${last.duration_ms === null ? '' : ` in ${last.duration_ms} ms`}.`
    : '';
  return html`<div id="ping" data-testid="ping" class="ping" ${pending ? html`hx-get="${self}" hx-trigger="every 1s" hx-headers='{"X-Console-Poll": "1"}' hx-select="#ping" hx-swap="outerHTML"` : ''}>
<p role="status">Test ping <a href="/console/deliveries/${d.id}" data-testid="ping-delivery"><code>${d.id.slice(0, 8)}</code></a>: <span data-testid="ping-status">${chip(d.status)}</span>${answer}</p>
${pending ? html`<noscript><p><a href="${self}">Check again</a></p></noscript>` : ''}
</div>`;
}
