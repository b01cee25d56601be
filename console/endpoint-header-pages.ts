import type { Endpoint } from './api-types';
import { field, need, uuid, type ConsoleCtx, type ConsoleKit, type ConsoleRouter } from './console-kit';
import { refusal } from './format';
import type { Notice } from './layout';
import { headerRowsOf, headersForm, type HeaderRow } from './views/endpoint-headers-view';

/** At most this many rows are read from a posted form (the API allows 20 headers; spare rows are empty). */
const MAX_ROWS = 40;

/** The posted rows, named ones only, in order. */
function rowsOf(body: unknown): HeaderRow[] {
  const count = Math.min(Number(field(body, 'rows')) || 0, MAX_ROWS);
  const rows: HeaderRow[] = [];
  for (let i = 0; i < count; i++) {
    const name = field(body, `name_${i}`).trim();
    if (name) rows.push({ name, value: field(body, `value_${i}`), secret: field(body, `secret_${i}`) === 'true' });
  }
  return rows;
}

/** The rows as the PATCH body's `headers`: a secret row left empty keeps the value it has (decision 0400). */
const headersOf = (rows: HeaderRow[]) =>
  Object.fromEntries(
    rows.map((r) => [r.name, r.secret && r.value === '' ? { secret: true } : { value: r.value, secret: r.secret }]),
  );

/**
 * An endpoint's static headers in the portal (docs/decisions/0400-custom-headers-per-endpoint.md): shown with
 * secret values masked, set through the API's PATCH, POST-redirect-GET to the page with its notice.
 */
export function endpointHeaderPages(router: ConsoleRouter, kit: ConsoleKit): void {
  const { session, sameOrigin, form, api, page } = kit;
  const one = (id: string) => `${api.endpoints}/${id}`;
  const endpoint = async (ctx: ConsoleCtx, id: string) =>
    need(await ctx.state.api.get<Endpoint>(one(id)), 'the endpoint');
  const saved: Notice = { kind: 'ok', text: 'Headers saved: the next deliveries carry them.' };

  router.get('/webhooks/:id/headers', session, async (ctx) => {
    const e = await endpoint(ctx, uuid(ctx.params.id));
    const notice = ctx.query.done === 'saved' ? saved : null;
    page(ctx, 200, 'Endpoint headers', 'webhooks', headersForm(e, headerRowsOf(e), notice));
  });

  router.post('/webhooks/:id/headers', sameOrigin, session, form, async (ctx) => {
    const id = uuid(ctx.params.id);
    const rows = rowsOf(ctx.request.body);
    const answer = await ctx.state.api.patch<Endpoint>(one(id), { headers: headersOf(rows) });
    if (answer.ok) {
      ctx.status = 303;
      return ctx.redirect(`/console/webhooks/${id}/headers?done=saved`);
    }
    // Shown again as typed, but never a secret value: those are typed again.
    const typed = rows.map((r) => (r.secret ? { ...r, value: '' } : r));
    page(
      ctx,
      answer.status,
      'Endpoint headers',
      'webhooks',
      headersForm(await endpoint(ctx, id), typed, refusal(answer)),
    );
  });
}
