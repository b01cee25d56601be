import type { Principal } from '../domain/principal';
import { html, type Html } from '../lib/html';

export type Section =
  'queue' | 'offerings' | 'funds' | 'attention' | 'webhooks' | 'deliveries' | 'events' | 'catalog' | 'none';

const NAV: { section: Section; href: string; label: string }[] = [
  { section: 'queue', href: '/console/', label: 'Review queue' },
  { section: 'offerings', href: '/console/offerings', label: 'Offerings' },
  { section: 'funds', href: '/console/funds', label: 'Funds' },
  { section: 'attention', href: '/console/attention', label: 'Needs attention' },
  { section: 'webhooks', href: '/console/webhooks', label: 'Webhooks' },
  { section: 'deliveries', href: '/console/deliveries', label: 'Deliveries' },
  { section: 'events', href: '/console/events', label: 'Events' },
  { section: 'catalog', href: '/console/catalog', label: 'Event catalog' },
];

/** The page every console screen sits in: skip link, navigation, who is signed in, one <main>. */
export function layout(opts: {
  title: string;
  section: Section;
  principal: Principal | null;
  set: string;
  /** PAYMENTS_SANDBOX_IN_PRODUCTION: every page says no money moves (docs/decisions/0259-production-by-default.md). */
  sandboxInProduction?: boolean;
  body: Html;
  scripts?: string[];
}): string {
  const p = opts.principal;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false}'>
<title>${opts.title} · Tranche console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/pico.min.css">
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/htmx.min.js" defer></script>
${(opts.scripts ?? []).map((s) => html`<script src="/console/assets/${s}" defer></script>`)}
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="container-fluid site-header">
  <nav aria-label="Console">
    <ul><li><strong>Tranche console</strong> <small class="muted">Set ${opts.set}</small></li>${
      opts.sandboxInProduction
        ? html`<li><mark data-testid="sandbox-in-production">Payment sandbox in production: no money moves</mark></li>`
        : ''
    }</ul>
    ${
      p
        ? html`<ul>${NAV.map((n) => html`<li><a href="${n.href}" ${n.section === opts.section ? html`aria-current="page"` : ''}>${n.label}</a></li>`)}</ul>
    <ul>
      <li><small>${p.userId} · ${p.roles.join(', ')}<br><span class="muted">org ${p.orgId}</span></small></li>
      <li><form method="post" action="/console/auth/sign-out" class="inline"><button type="submit" class="secondary outline">Sign out</button></form></li>
    </ul>`
        : ''
    }
  </nav>
</header>
<main id="main" class="container-fluid" tabindex="-1">
${opts.body}
</main>
</body>
</html>`.text;
}

/**
 * A message after an action: a status for success, an alert for a refusal. It takes the focus
 * (autofocus, which htmx also honours in swapped content), so a keyboard user continues from it
 * rather than from the top of the page or a button that no longer exists.
 */
export function banner(b: Notice | null): Html {
  if (!b) return html``;
  return b.kind === 'ok'
    ? html`<div class="notice ok" role="status" data-testid="notice" tabindex="-1" autofocus>${b.text}</div>`
    : html`<div class="notice refused" role="alert" data-testid="refusal" tabindex="-1" autofocus><strong>Refused:</strong> ${b.text}</div>`;
}
export interface Notice {
  kind: 'ok' | 'refused';
  text: string;
}
