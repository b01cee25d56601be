import type { Principal } from '../domain/principal';
import { html, type Html } from '../lib/html';

/**
 * The staff commands the console offers; each is the API route of the same name
 * (docs/decisions/0009-staff-operations.md).
 */
export const COMMANDS = {
  approve: { label: 'Approve', done: 'Approved', reason: null, roles: ['staff', 'admin'] },
  reject: {
    label: 'Reject',
    done: 'Rejected',
    reason: 'Reason for rejecting (the investor is told)',
    roles: ['staff', 'admin'],
  },
  'request-info': {
    label: 'Request information',
    done: 'Information requested',
    reason: 'What the investor must provide',
    roles: ['staff', 'admin'],
  },
  // Before review only (docs/decisions/0369-staff-cancel-before-review.md).
  cancel: {
    label: 'Cancel',
    done: 'Cancelled',
    reason: 'Reason for cancelling (the investor is told)',
    roles: ['staff', 'admin'],
  },
  void: { label: 'Void', done: 'Voided', reason: 'Reason for voiding the agreement', roles: ['admin'] },
  'issue-shares': { label: 'Issue shares', done: 'Shares issued', reason: null, roles: ['staff', 'admin'] },
} as const;
export type CommandName = keyof typeof COMMANDS;
export const isCommand = (s: string): s is CommandName => Object.hasOwn(COMMANDS, s);

/** Review decisions: shown on the queue and the detail page of a pending_review subscription. */
export const REVIEW_COMMANDS: CommandName[] = ['approve', 'reject', 'request-info', 'void'];

/**
 * One form per command. Without JavaScript each is a plain POST that answers with the whole page;
 * with htmx it replaces only `target`. Commands that need a reason sit in a native disclosure.
 * Void is offered to admins only; the API is what enforces it either way. Cancel is offered before
 * review (draft, pending_signature, pending_payment), where the investor's DELETE is not staff's.
 */
export function commandForms(
  id: string,
  names: CommandName[],
  p: Principal,
  ctx: { from: string; target: string },
): Html {
  const allowed = names.filter((n) => COMMANDS[n].roles.some((r) => p.roles.includes(r)));
  const form = (n: CommandName, inner: Html) => html`<form method="post" action="/console/subscriptions/${id}/${n}"
      hx-post="/console/subscriptions/${id}/${n}" hx-target="${ctx.target}" hx-select="${ctx.target}" hx-swap="outerHTML">
      <input type="hidden" name="from" value="${ctx.from}">${inner}</form>`;
  return html`<div class="actions">${allowed.map((n) => {
    const c = COMMANDS[n];
    if (!c.reason) return form(n, html`<button type="submit" data-testid="${n}-${id}">${c.label}</button>`);
    const field = `${n}-reason-${id}`;
    return html`<details class="command">
      <summary role="button" class="secondary outline" data-testid="${n}-open-${id}">${c.label}…</summary>
      ${form(
        n,
        html`<label for="${field}">${c.reason}</label>
        <textarea id="${field}" name="reason" required minlength="1" maxlength="2000" rows="2"></textarea>
        <button type="submit" class="${n === 'void' || n === 'cancel' ? 'contrast' : ''}" data-testid="${n}-submit-${id}">${c.label}</button>`,
      )}
    </details>`;
  })}</div>`;
}
