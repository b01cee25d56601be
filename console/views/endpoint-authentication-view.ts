import type { Endpoint } from '../api-types';
import { when } from '../format';
import { html, type Html } from '../../lib/html';
import { banner, type Notice } from '../layout';

/** What the authentication form holds (never a secret: those are typed again on each change). */
export interface AuthenticationDraft {
  type: string;
  tokenUrl: string;
  clientId: string;
  scope: string;
}

export const authenticationDraftOf = (e: Endpoint): AuthenticationDraft => {
  const a = e.authentication;
  if (a?.type === 'oauth2_client_credentials')
    return { type: a.type, tokenUrl: a.token_url, clientId: a.client_id, scope: a.scope ?? '' };
  return { type: a?.type ?? 'none', tokenUrl: '', clientId: '', scope: '' };
};

/** The endpoint's authentication in a line or two: never its key or secret (issue 32). */
export function authenticationFacts(e: Endpoint): Html {
  const a = e.authentication;
  if (!a) return html`<span data-testid="authentication-type">Signature only</span>`;
  if (a.type === 'oauth2_client_credentials')
    return html`<span data-testid="authentication-type">OAuth2 client credentials</span>: client <code>${a.client_id}</code> at <code>${a.token_url}</code>${a.scope ? html`, scope <code>${a.scope}</code>` : ''} <small class="muted">(client secret sealed, not shown)</small>`;
  const c = a.client_certificate;
  return html`<span data-testid="authentication-type">Mutual TLS</span>: certificate <code>${c.subject}</code> from <code>${c.issuer}</code>, valid until ${when(c.valid_to)} <small class="muted">(SHA-256 <code>${c.fingerprint_sha256}</code>; key sealed, not shown)</small>${a.ca_certificates ? html`<br><small>Receiver must chain to: ${a.ca_certificates.map((ca) => html`<code>${ca.subject}</code> `)}</small>` : ''}`;
}

/** Sets mutual TLS or OAuth2 client credentials, or removes the authentication: through the PATCH route. */
export function authenticationForm(e: Endpoint, d: AuthenticationDraft, notice: Notice | null): Html {
  const option = (value: string, label: string) =>
    html`<option value="${value}" ${d.type === value ? 'selected' : ''}>${label}</option>`;
  return html`<nav aria-label="Breadcrumb"><ul><li><a href="/console/webhooks">Webhooks</a></li><li><a href="/console/webhooks/${e.id}">Endpoint</a></li><li>Authentication</li></ul></nav>
<h1>Authentication of ${e.url}</h1>
${banner(notice)}
<p>Now: ${authenticationFacts(e)}</p>
<p>Every delivery is signed. A receiver that also demands authentication at the transport gets it here. Keys and
secrets are sealed when saved and never shown again: a change gives the whole authentication again.</p>
<form method="post" action="/console/webhooks/${e.id}/authentication" class="endpoint-form" data-testid="authentication-form" autocomplete="off">
  <label for="auth-type">Type</label>
  <select id="auth-type" name="type">${option('none', 'Signature only')}${option('mtls', 'Mutual TLS (client certificate)')}${option('oauth2_client_credentials', 'OAuth2 client credentials')}</select>
  <fieldset><legend>Mutual TLS</legend>
    <label for="client-certificate">Client certificate (PEM, then any intermediates)</label>
    <textarea id="client-certificate" name="clientCertificate" rows="4" spellcheck="false"></textarea>
    <label for="client-key">Client key (PEM, unencrypted)</label>
    <textarea id="client-key" name="clientKey" rows="4" spellcheck="false"></textarea>
    <label for="ca-certificate">CA certificate of the receiver <span class="muted">(optional; instead of the public roots)</span></label>
    <textarea id="ca-certificate" name="caCertificate" rows="3" spellcheck="false"></textarea>
  </fieldset>
  <fieldset><legend>OAuth2 client credentials</legend>
    <label for="token-url">Token URL</label>
    <input id="token-url" name="tokenUrl" type="url" maxlength="2048" value="${d.tokenUrl}" placeholder="https://auth.example.com/oauth2/token">
    <label for="client-id">Client id</label>
    <input id="client-id" name="clientId" maxlength="256" value="${d.clientId}">
    <label for="client-secret">Client secret</label>
    <input id="client-secret" name="clientSecret" type="password" maxlength="1024" autocomplete="new-password">
    <label for="scope">Scope <span class="muted">(optional, space-separated)</span></label>
    <input id="scope" name="scope" maxlength="1000" value="${d.scope}">
  </fieldset>
  <button type="submit" data-testid="save-authentication">Save</button>
  <a href="/console/webhooks/${e.id}" role="button" class="secondary outline">Back</a>
</form>`;
}
