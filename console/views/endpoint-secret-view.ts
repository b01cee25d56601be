import type { EndpointWithSecret } from '../api-types';
import { when } from '../format';
import { html, type Html } from '../../lib/html';
import { overlapWords } from './endpoint-manage-view';

/**
 * The shortest check with each consumer kit (docs/integrators/webhooks/): the Standard Webhooks scheme over the
 * raw body, the secret read from the environment rather than pasted into code.
 */
const SNIPPETS: { kit: string; file: string; code: string }[] = [
  {
    kit: 'TypeScript',
    file: 'docs/integrators/webhooks/typescript/verify.ts',
    code: `import { verifyStandardWebhook } from './verify';

// rawBody: the request's bytes as received (a Buffer), before any JSON parsing
const verdict = verifyStandardWebhook(process.env.WEBHOOK_SECRET!, rawBody, {
  id: req.headers['webhook-id'],
  timestamp: req.headers['webhook-timestamp'],
  signature: req.headers['webhook-signature'],
});
if (verdict !== 'ok') return res.writeHead(401).end();`,
  },
  {
    kit: 'Python',
    file: 'docs/integrators/webhooks/python/verify.py',
    code: `import os
from verify import verify_standard_webhook

verdict = verify_standard_webhook(
    os.environ["WEBHOOK_SECRET"], raw_body,
    headers.get("webhook-id"), headers.get("webhook-timestamp"), headers.get("webhook-signature"),
)
if verdict != "ok":
    return 401`,
  },
  {
    kit: 'Go',
    file: 'docs/integrators/webhooks/go/verify.go',
    code: `verdict := VerifyStandardWebhook(os.Getenv("WEBHOOK_SECRET"), rawBody,
	r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), r.Header.Get("webhook-signature"),
	time.Now(), 5*time.Minute)
if verdict != "ok" {
	w.WriteHeader(http.StatusUnauthorized)
	return
}`,
  },
];

/**
 * The signing secret, this once: the API never shows it again. Read-only text anyone can select;
 * with JavaScript a button copies it (copy-secret.js).
 */
export function secretBody(e: EndpointWithSecret, opts: { rotated: boolean; overlapSeconds: number }): Html {
  return html`<nav aria-label="Breadcrumb"><ul><li><a href="/console/webhooks">Webhooks</a></li><li>Signing secret</li></ul></nav>
<hgroup><h1>${opts.rotated ? 'New signing secret' : 'Endpoint registered'}</h1><p>${e.url}</p></hgroup>
<article class="secret" data-testid="secret-card">
<label for="signing-secret"><strong>Signing secret</strong>: shown only now. Store it where your receiver reads it (as <code>WEBHOOK_SECRET</code> in the kits).</label>
<div role="group"><input id="signing-secret" readonly value="${e.signing_secret}" data-testid="signing-secret" spellcheck="false" autocomplete="off">
<button type="button" class="secondary" data-copy="signing-secret" data-testid="copy-secret" hidden>Copy</button></div>
<p id="signing-secret-copied" role="status" data-testid="copy-status"></p>
${
  opts.rotated
    ? html`<p data-testid="overlap">The replaced secret keeps signing for ${overlapWords(opts.overlapSeconds)}${e.previous_secret_expires_at ? html`, until ${when(e.previous_secret_expires_at)}` : ''}:
<code>webhook-signature</code> carries one signature per secret until then, so a receiver verifying that header accepts both while you deploy the new one.
<code>X-Service-Signature</code> is made with the new secret from now on.</p>`
    : ''
}
</article>
<section aria-labelledby="verify-h"><h2 id="verify-h">Verify deliveries</h2>
<p>Every delivery is signed twice over its raw body; see <code>docs/integrators/webhooks/README.md</code>. With the kits:</p>
${SNIPPETS.map(
  (
    s,
  ) => html`<details data-testid="snippet-${s.kit.toLowerCase()}"><summary>${s.kit} <small class="muted">${s.file}</small></summary>
<pre tabindex="0" aria-label="${s.kit} snippet"><code>${s.code}</code></pre></details>`,
)}
</section>
<p><a href="/console/webhooks/${e.id}" role="button" data-testid="to-endpoint">I have stored it: open the endpoint</a></p>`;
}
