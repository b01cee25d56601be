import { html, type Html } from '../../lib/html';
import { banner, type Notice } from '../layout';

export function signInBody(notice: Notice | null): Html {
  return html`<article class="sign-in">
<h1>Tranche operator console</h1>
<p>Review subscriptions, reconcile funds and watch webhook deliveries for your organisation.</p>
${banner(notice)}
<a href="/console/auth/start" role="button" data-testid="sign-in">Sign in with your organisation</a>
</article>`;
}
