import type { ApiAnswer } from '../api-client';
import type { AuditEventList } from '../api-types';
import { chip, refusal, when } from '../format';
import { html, type Html } from '../../lib/html';
import { banner } from '../layout';

/** The filters the page passes on to GET /audit/events, as the browser sent them. */
const FILTERS = ['actor', 'action', 'subject_id', 'outcome'] as const;

function params(query: Record<string, unknown>, extra: Record<string, string> = {}): URLSearchParams {
  const out = new URLSearchParams();
  for (const key of FILTERS) {
    const v = query[key];
    if (typeof v === 'string' && v.trim()) out.set(key, v.trim());
  }
  for (const [k, v] of Object.entries(extra)) out.set(k, v);
  return out;
}

/** The API call behind the page: the filters, 50 a page, and the cursor of the page asked for. */
export function auditPath(query: Record<string, unknown>): string {
  const extra: Record<string, string> = { limit: '50' };
  if (typeof query.cursor === 'string') extra.cursor = query.cursor;
  return `/audit/events?${params(query, extra).toString()}`;
}

/** Issue 21: the organisation's audit trail for its administrators, newest first, filtered, a page at a time. */
export function auditBody(answer: ApiAnswer<AuditEventList>, query: Record<string, unknown>): Html {
  const value = (key: (typeof FILTERS)[number]) => (typeof query[key] === 'string' ? (query[key] as string) : '');
  const items = answer.ok ? answer.data.items : [];
  const next = answer.ok && answer.data.next_cursor ? params(query, { cursor: answer.data.next_cursor }) : null;
  return html`<hgroup><h1>Audit trail</h1><p>Who did what, when and from where, newest first. Administrators only.</p></hgroup>
${banner(answer.ok ? null : refusal(answer))}
<search><form method="get" action="/console/audit" class="lookup">
  <div class="grid">
    <label>Actor (user id)<input name="actor" value="${value('actor')}" maxlength="200" autocomplete="off"></label>
    <label>Action<input name="action" value="${value('action')}" maxlength="200" placeholder="subscription.*" autocomplete="off"></label>
    <label>Subject id<input name="subject_id" value="${value('subject_id')}" maxlength="200" autocomplete="off"></label>
    <label>Outcome<select name="outcome">
      <option value=""${value('outcome') === '' ? ' selected' : ''}>any</option>
      <option value="succeeded"${value('outcome') === 'succeeded' ? ' selected' : ''}>succeeded</option>
      <option value="refused"${value('outcome') === 'refused' ? ' selected' : ''}>refused</option>
    </select></label>
  </div>
  <button type="submit">Filter</button>
</form></search>
${
  items.length
    ? html`<div class="overflow-auto"><table class="striped" data-testid="audit-events">
<caption class="visually-hidden">Audit entries</caption>
<thead><tr><th scope="col">#</th><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Subject</th><th scope="col">Outcome</th><th scope="col">Address</th></tr></thead>
<tbody>${items.map(
        (e) => html`<tr data-testid="audit-${e.id}">
<td>${e.seq}</td><td>${when(e.occurred_at)}</td>
<td><code>${e.actor.user_id ?? '—'}</code> <span class="muted">${e.actor.roles.join(', ')}${e.actor.api_key_id ? ' · API key' : ''}${e.actor.console_session ? ' · console' : ''}</span></td>
<td><code>${e.action}</code></td><td>${e.subject.type} <code>${e.subject.id}</code></td>
<td>${chip(e.outcome)}${e.error_code ? html` <code>${e.error_code}</code>` : ''}</td>
<td>${e.actor.client_address ?? '—'}</td></tr>`,
      )}</tbody></table></div>`
    : answer.ok
      ? html`<p>No entries match.</p>`
      : ''
}
${next ? html`<p><a href="/console/audit?${next.toString()}" data-testid="next">Older entries</a></p>` : ''}
<p class="muted">The CSV export is on the API: GET /audit/events.csv, with the same filters.</p>`;
}
