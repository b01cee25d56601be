import type { SandboxSession } from '../../db/entities/payment-sandbox';
import { formatAmount } from '../../lib/money';

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const METHOD_LABELS: Record<string, string> = {
  card: 'Card',
  us_bank_account: 'US bank account (ACH)',
  crypto: 'Crypto',
  wire: 'Wire transfer',
  other: 'Other',
};

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(title)} · Tranche sandbox</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1d2330}
.banner{background:#fff4d6;border:1px solid #e9c46a;padding:.5rem .75rem;border-radius:6px;font-size:.9rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}dt{color:#5b6472}
form{display:inline}button{font-size:1rem;padding:.6rem 1rem;margin:.25rem .25rem 0 0;border-radius:6px;border:1px solid #8892a0;background:#fff;cursor:pointer}
button.primary{background:#2457d6;color:#fff;border-color:#2457d6}</style></head>
<body><p class="banner">Sandbox processor: no real money moves.</p><h1>${escape(title)}</h1>${body}</body></html>`;
}

const button = (action: string, label: string, testId: string, primary = false) =>
  `<form method="post" action="${escape(action)}"><button type="submit" data-testid="${testId}"${primary ? ' class="primary"' : ''}>${escape(label)}</button></form>`;

/** The page a person completes, cancels or declines a session on (the sandbox's hosted checkout). */
export function sessionPage(s: SandboxSession, basePath: string): string {
  const method = METHOD_LABELS[s.method] ?? s.method;
  if (s.mode === 'setup') {
    return page(
      'Link a payment method',
      `<dl><dt>Method</dt><dd>${escape(method)}</dd><dt>Subscription</dt><dd>${escape(s.subscriptionId)}</dd></dl>
<p>Nothing is charged now; the amount is collected after approval.</p>
${button(`${basePath}/complete`, 'Link payment method', 'complete', true)}${button(`${basePath}/cancel`, 'Cancel', 'cancel')}`,
    );
  }
  const amount = `${formatAmount(BigInt(s.amountMinor ?? '0'), s.currency)} ${s.currency}`;
  return page(
    'Pay for your subscription',
    `<dl><dt>Amount</dt><dd data-testid="amount">${escape(amount)}</dd><dt>Method</dt><dd>${escape(method)}</dd><dt>Subscription</dt><dd>${escape(s.subscriptionId)}</dd></dl>
${button(`${basePath}/complete`, `Pay ${amount}`, 'pay', true)}${button(`${basePath}/decline`, 'Decline (test a failed payment)', 'decline')}${button(`${basePath}/cancel`, 'Cancel', 'cancel')}`,
  );
}

export function closedPage(s: SandboxSession | null): string {
  if (!s) return page('Session not found', '<p>This payment session does not exist.</p>');
  const state = s.status === 'open' ? 'expired' : s.status;
  return page(
    'Session closed',
    `<p data-testid="closed">This session is ${escape(state)}; nothing more can be done here.</p>`,
  );
}
