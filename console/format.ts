import type { ApiAnswer } from './api-client';
import { html, type Html } from '../lib/html';
import type { Notice } from './layout';

export const money = (amount: string, currency: string) => `${amount} ${currency}`;

/** "3 d 4 h", "2 h 5 min", "40 s": the waiting time a reviewer reads at a glance. */
export function duration(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d) return `${d} d ${h} h`;
  if (h) return `${h} h ${m} min`;
  if (m) return `${m} min`;
  return `${seconds} s`;
}

/** A timestamp as UTC to the second, machine-readable in its datetime attribute. */
export function when(iso: string | null | undefined): Html {
  if (!iso) return html`<span class="muted">—</span>`;
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')} UTC</time>`;
}

/** A status as text (never colour alone), styled by its kind. */
export const chip = (value: string | null | undefined) =>
  html`<span class="chip chip-${value ?? 'none'}">${(value ?? 'none').replaceAll('_', ' ')}</span>`;

/** What the API said when it refused: its message and code, as the error envelope gives them. */
export function refusal(answer: ApiAnswer): Notice {
  const e = answer.error;
  if (!e) return { kind: 'refused', text: `The service answered ${answer.status}` };
  // Validation failures name each field and what is wrong with it: that is what the person must fix.
  const fields = Array.isArray(e.details)
    ? (e.details as { path?: string; message?: string }[]).map((d) => `${d.path || 'input'}: ${d.message ?? ''}`)
    : [];
  return { kind: 'refused', text: `${e.message}${fields.length ? ` (${fields.join('; ')})` : ''} (${e.code})` };
}
