import type { Endpoint } from '../api-types';
import { html, type Html } from '../../lib/html';
import { banner, type Notice } from '../layout';

/** One row of the headers form: a secret row's value is never filled in (left empty, the value it has is kept). */
export interface HeaderRow {
  name: string;
  value: string;
  secret: boolean;
}

/** Empty rows after the endpoint's own, for headers to add. */
const SPARE_ROWS = 3;

/** The endpoint's headers as form rows: secret values empty. */
export const headerRowsOf = (e: Endpoint): HeaderRow[] =>
  Object.entries(e.headers).map(([name, h]) => ({ name, value: h.secret ? '' : (h.value ?? ''), secret: h.secret }));

/** The endpoint's headers in a line: names and plain values, a secret one's value masked. */
export function headersFacts(e: Endpoint): Html {
  const entries = Object.entries(e.headers);
  if (!entries.length) return html`<span data-testid="headers-none">None</span>`;
  return html`${entries.map(
    ([name, h]) =>
      html`<code data-testid="header">${name}: ${h.secret ? '••••••' : h.value}</code>${h.secret ? html` <small class="muted">(secret)</small>` : ''} `,
  )}`;
}

/**
 * Sets the endpoint's static headers (docs/decisions/0400-custom-headers-per-endpoint.md) through the
 * PATCH route: the rows replace the set; a row whose name is cleared is removed; a secret row left
 * empty keeps the value it has.
 */
export function headersForm(e: Endpoint, rows: HeaderRow[], notice: Notice | null): Html {
  const all = [...rows, ...Array.from({ length: SPARE_ROWS }, () => ({ name: '', value: '', secret: false }))];
  const row = (r: HeaderRow, i: number) => html`<fieldset class="header-row" data-testid="header-row">
    <legend>Header ${i + 1}</legend>
    <label for="header-name-${i}">Name</label>
    <input id="header-name-${i}" name="name_${i}" maxlength="100" value="${r.name}" spellcheck="false" autocomplete="off">
    <label for="header-value-${i}">Value${r.secret ? html` <span class="muted">(secret: leave empty to keep it)</span>` : ''}</label>
    <input id="header-value-${i}" name="value_${i}" maxlength="1024" value="${r.secret ? '' : r.value}" spellcheck="false" ${r.secret ? html`type="password" autocomplete="new-password"` : html`autocomplete="off"`}>
    <label><input type="checkbox" name="secret_${i}" value="true" ${r.secret ? 'checked' : ''}> Secret: sealed, never shown again</label>
  </fieldset>`;
  return html`<nav aria-label="Breadcrumb"><ul><li><a href="/console/webhooks">Webhooks</a></li><li><a href="/console/webhooks/${e.id}">Endpoint</a></li><li>Headers</li></ul></nav>
<h1>Headers of ${e.url}</h1>
${banner(notice)}
<p>Now: ${headersFacts(e)}</p>
<p>Every delivery to this endpoint carries these headers, beside the signature headers (which they cannot
replace). Mark a credential, such as a gateway's API key, secret: it is sealed when saved and never shown again.
Clear a name to remove its header. At most 20 headers.</p>
<form method="post" action="/console/webhooks/${e.id}/headers" class="endpoint-form" data-testid="headers-form" autocomplete="off">
  <input type="hidden" name="rows" value="${String(all.length)}">
  ${all.map(row)}
  <button type="submit" data-testid="save-headers">Save</button>
  <a href="/console/webhooks/${e.id}" role="button" class="secondary outline">Back</a>
</form>`;
}
