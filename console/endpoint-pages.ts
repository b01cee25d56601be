import type { Context } from 'koa';
import type {
  DeliveryDetail,
  Endpoint,
  EndpointHealth,
  EndpointList,
  EndpointWithSecret,
  EventTypes,
  TestEvent,
} from './api-types';
import {
  field,
  fragment,
  isHtmx,
  need,
  uuid,
  type ConsoleCtx,
  type ConsoleKit,
  type ConsoleRouter,
} from './console-kit';
import { refusal } from './format';
import { formKeyOf, keyAfter, sendOnce } from './form-keys';
import { secretPath } from './session-cookies';
import { secretFlash } from './secret-flash';
import { html } from '../lib/html';
import type { Notice } from './layout';
import { deleteConfirm, draftOf, EMPTY_DRAFT, endpointForm } from './views/endpoint-forms-view';
import { authenticationOf, bodyOf, doneNotice, draftFrom } from './endpoint-form-bodies';
import { manageSection, pingBlock } from './views/endpoint-manage-view';
import { secretBody } from './views/endpoint-secret-view';
import { authenticationDraftOf, authenticationForm } from './views/endpoint-authentication-view';
import { endpointBody, endpointsBody, retriedRow, WINDOWS, type WindowName } from './views/webhooks-view';

const CHART = ['chart.umd.min.js', 'health-chart.js'];

/**
 * Webhook endpoints, self-served (docs/decisions/0214-portal-where-the-endpoint-pages-live.md): list,
 * register (secret shown once), edit, disable and re-enable, delete, rotate the secret, send a test ping and
 * watch it arrive; the health page and manual retry. Every change is the JSON API's own route, called with
 * the user's token.
 */
export function endpointPages(router: ConsoleRouter, kit: ConsoleKit): void {
  const { page, session, sameOrigin, form, api, links, cookies, secrets } = kit;
  // A double submit's second request waits for the first's answer at most as long as a command may run.
  const twinWaitMs = kit.config.COMMAND_TIMEOUT_MS + 5_000;
  const staleForm: Notice = {
    kind: 'refused',
    text: 'This form is from an older page and was not sent: check it and send it again.',
  };
  const flash = secretFlash(cookies, secrets, (ctx) => (ctx as ConsoleCtx).state.principal);
  /**
   * POST-redirect-GET for a secret (docs/decisions/0375-console-forms-carry-their-key.md): the answer's
   * secret is sealed into a cookie only its page receives, and the browser is sent there.
   */
  const toSecret = (ctx: ConsoleCtx, e: EndpointWithSecret, rotated: boolean) => {
    flash.put(ctx, e.id, {
      signing_secret: e.signing_secret,
      previous_secret_expires_at: e.previous_secret_expires_at ?? null,
      rotated,
    });
    ctx.status = 303;
    ctx.redirect(secretPath(e.id));
  };
  const overlapSeconds = kit.config.WEBHOOK_SECRET_OVERLAP_SECONDS;
  const one = (id: string) => `${api.endpoints}/${id}`;
  const eventTypes = async (ctx: ConsoleCtx) =>
    need(await ctx.state.api.get<EventTypes>('/notifications/event-types'), 'event types').eventTypes;
  const endpoint = async (ctx: ConsoleCtx, id: string) =>
    need(await ctx.state.api.get<Endpoint>(one(id)), 'the endpoint');
  const toEndpoint = (ctx: Context, id: string, done: string) => {
    ctx.status = 303;
    ctx.redirect(`/console/webhooks/${id}?done=${done}`);
  };

  router.get('/webhooks', session, async (ctx) => {
    const list = need(await ctx.state.api.get<EndpointList>(`${api.endpoints}?limit=100`), 'endpoints');
    const rows = await Promise.all(
      list.items.map(async (e) => {
        const h = await ctx.state.api.get<EndpointHealth>(`${one(e.id)}/health`);
        return { endpoint: e, health: h.ok ? h.data : null };
      }),
    );
    page(ctx, 200, 'Webhooks', 'webhooks', endpointsBody(rows, doneNotice(ctx)));
  });

  router.get('/webhooks/new', session, async (ctx) => {
    page(
      ctx,
      200,
      'Register an endpoint',
      'webhooks',
      endpointForm(EMPTY_DRAFT, await eventTypes(ctx), { notice: null }),
    );
  });

  // Registering makes a signing secret: under the form's key, then to the secret's page.
  router.post('/webhooks', sameOrigin, session, form, async (ctx) => {
    const draft = draftFrom(ctx.request.body);
    const key = formKeyOf(ctx.request.body);
    if (!key)
      return page(
        ctx,
        400,
        'Register an endpoint',
        'webhooks',
        endpointForm(draft, await eventTypes(ctx), { notice: staleForm }),
      );
    const answer = await sendOnce(
      () => ctx.state.api.post<EndpointWithSecret>(api.endpoints, bodyOf(draft, false), { idempotencyKey: key }),
      twinWaitMs,
    );
    if (answer.ok) return toSecret(ctx, answer.data, false);
    const body = endpointForm(draft, await eventTypes(ctx), {
      notice: refusal(answer),
      formKey: keyAfter(answer, key),
    });
    page(ctx, answer.status, 'Register an endpoint', 'webhooks', body);
  });

  // The secret just made, shown once from its sealed cookie: a reload makes nothing and shows nothing.
  router.get('/webhooks/:id/secret', session, async (ctx) => {
    const id = uuid(ctx.params.id);
    const kept = flash.open(ctx, id);
    if (!kept) {
      flash.clear(ctx, id);
      ctx.status = 303;
      return ctx.redirect(`/console/webhooks/${id}?done=secret-gone`);
    }
    const shown = { ...(await endpoint(ctx, id)), ...kept };
    flash.clear(ctx, id);
    page(ctx, 200, 'Signing secret', 'webhooks', secretBody(shown, { rotated: kept.rotated, overlapSeconds }), [
      'copy-secret.js',
    ]);
  });

  router.get('/webhooks/:id', session, async (ctx) => {
    const window =
      typeof ctx.query.window === 'string' && Object.hasOwn(WINDOWS, ctx.query.window)
        ? (ctx.query.window as WindowName)
        : '24h';
    const id = uuid(ctx.params.id);
    const body = await endpointPage(ctx, id, doneNotice(ctx), window);
    flash.clear(ctx, id);
    page(ctx, 200, 'Webhook endpoint', 'webhooks', body, CHART);
  });

  router.get('/webhooks/:id/edit', session, async (ctx) => {
    const e = await endpoint(ctx, uuid(ctx.params.id));
    page(
      ctx,
      200,
      'Edit endpoint',
      'webhooks',
      endpointForm(draftOf(e), await eventTypes(ctx), { id: e.id, notice: null }),
    );
  });

  router.post('/webhooks/:id/edit', sameOrigin, session, form, async (ctx) => {
    const id = uuid(ctx.params.id);
    const draft = draftFrom(ctx.request.body);
    let answer = await ctx.state.api.patch<Endpoint>(one(id), bodyOf(draft, true));
    if (answer.ok) answer = await ctx.state.api.put(`${one(id)}/subscriptions`, { eventTypes: draft.eventTypes });
    if (answer.ok) return toEndpoint(ctx, id, 'updated');
    const body = endpointForm(draft, await eventTypes(ctx), { id, notice: refusal(answer) });
    page(ctx, answer.status, 'Edit endpoint', 'webhooks', body);
  });

  // How deliveries authenticate at the transport; secrets go to the API once and are never shown.
  router.get('/webhooks/:id/authentication', session, async (ctx) => {
    const e = await endpoint(ctx, uuid(ctx.params.id));
    page(ctx, 200, 'Endpoint authentication', 'webhooks', authenticationForm(e, authenticationDraftOf(e), null));
  });

  router.post('/webhooks/:id/authentication', sameOrigin, session, form, async (ctx) => {
    const id = uuid(ctx.params.id);
    const answer = await ctx.state.api.patch<Endpoint>(one(id), { authentication: authenticationOf(ctx.request.body) });
    if (answer.ok) return toEndpoint(ctx, id, 'authentication');
    const draft = {
      type: field(ctx.request.body, 'type'),
      tokenUrl: field(ctx.request.body, 'tokenUrl'),
      clientId: field(ctx.request.body, 'clientId'),
      scope: field(ctx.request.body, 'scope'),
    };
    const body = authenticationForm(await endpoint(ctx, id), draft, refusal(answer));
    page(ctx, answer.status, 'Endpoint authentication', 'webhooks', body);
  });

  router.post('/webhooks/:id/status', sameOrigin, session, form, async (ctx) => {
    const id = uuid(ctx.params.id);
    const status = field(ctx.request.body, 'status') === 'enabled' ? 'enabled' : 'disabled';
    const answer = await ctx.state.api.patch<Endpoint>(one(id), { status });
    if (answer.ok) return toEndpoint(ctx, id, status);
    page(ctx, answer.status, 'Webhook endpoint', 'webhooks', await endpointPage(ctx, id, refusal(answer)), CHART);
  });

  router.get('/webhooks/:id/delete', session, async (ctx) => {
    page(ctx, 200, 'Delete endpoint', 'webhooks', deleteConfirm(await endpoint(ctx, uuid(ctx.params.id)), null));
  });

  router.post('/webhooks/:id/delete', sameOrigin, session, async (ctx) => {
    const id = uuid(ctx.params.id);
    const answer = await ctx.state.api.delete(one(id));
    if (!answer.ok)
      return page(
        ctx,
        answer.status,
        'Delete endpoint',
        'webhooks',
        deleteConfirm(await endpoint(ctx, id), refusal(answer)),
      );
    ctx.status = 303;
    ctx.redirect('/console/webhooks?done=deleted');
  });

  // Rotating makes a signing secret: under the form's key, then to the secret's page.
  router.post('/webhooks/:id/rotate-secret', sameOrigin, session, form, async (ctx) => {
    const id = uuid(ctx.params.id);
    const key = formKeyOf(ctx.request.body);
    if (!key) return page(ctx, 400, 'Webhook endpoint', 'webhooks', await endpointPage(ctx, id, staleForm), CHART);
    const answer = await sendOnce(
      () => ctx.state.api.post<EndpointWithSecret>(`${one(id)}/rotate-secret`, {}, { idempotencyKey: key }),
      twinWaitMs,
    );
    if (answer.ok) return toSecret(ctx, answer.data, true);
    const body = await endpointPage(ctx, id, refusal(answer), '24h', keyAfter(answer, key));
    page(ctx, answer.status, 'Webhook endpoint', 'webhooks', body, CHART);
  });

  router.post('/webhooks/:id/test', sameOrigin, session, async (ctx) => {
    const id = uuid(ctx.params.id);
    const sent = await ctx.state.api.post<TestEvent>(`${one(id)}/test`);
    if (!sent.ok) {
      if (isHtmx(ctx)) return fragment(ctx, html`<div id="ping">${refusedBanner(refusal(sent))}</div>`);
      return page(ctx, sent.status, 'Webhook endpoint', 'webhooks', await endpointPage(ctx, id, refusal(sent)), CHART);
    }
    await showPing(ctx, id, sent.data.delivery_id);
  });

  router.get('/webhooks/:id/pings/:delivery_id', session, async (ctx) => {
    await showPing(ctx, uuid(ctx.params.id), uuid(ctx.params.delivery_id));
  });

  router.post('/webhooks/deliveries/:delivery_id/retry', sameOrigin, session, form, async (ctx) => {
    const deliveryId = uuid(ctx.params.delivery_id);
    const answer = await ctx.state.api.post(`${api.deliveries}/${deliveryId}/retry`);
    const notice: Notice = answer.ok
      ? { kind: 'ok', text: `Retry of delivery ${deliveryId.slice(0, 8)} accepted: the attempt runs now.` }
      : refusal(answer);
    const row = field(ctx.request.body, 'row');
    const rowId = /^retry-[0-9a-f-]{36}(-\d+)?$/.test(row) ? row : `retry-${deliveryId}`;
    if (isHtmx(ctx)) return fragment(ctx, retriedRow(rowId, notice));
    const endpointId = uuid(field(ctx.request.body, 'endpoint_id'));
    const body = await endpointPage(ctx, endpointId, notice);
    page(ctx, answer.ok ? 200 : answer.status, 'Webhook endpoint', 'webhooks', body, CHART);
  });

  /** The ping's block for htmx's polling, or a page around it without JavaScript. */
  async function showPing(ctx: ConsoleCtx, endpointId: string, deliveryId: string) {
    const d = need(await ctx.state.api.get<DeliveryDetail>(`${api.deliveries}/${deliveryId}`), 'the delivery');
    if (isHtmx(ctx)) return fragment(ctx, pingBlock(endpointId, d));
    const back = html`<p><a href="/console/webhooks/${endpointId}">Back to the endpoint</a></p>`;
    page(ctx, 200, 'Test ping', 'webhooks', html`<h1>Test ping</h1>${pingBlock(endpointId, d)}${back}`);
  }

  async function endpointPage(
    ctx: ConsoleCtx,
    id: string,
    notice: Notice | null,
    window: WindowName = '24h',
    rotateKey?: string,
  ) {
    const w = WINDOWS[window];
    const [e, health] = await Promise.all([
      endpoint(ctx, id),
      ctx.state.api.get<EndpointHealth>(`${one(id)}/health?hours=${w.hours}&bucket_minutes=${w.bucket}`),
    ]);
    return endpointBody(
      e,
      need(health, 'the endpoint’s health'),
      links,
      notice,
      window,
      manageSection(e, overlapSeconds, rotateKey),
    );
  }
}

const refusedBanner = (n: Notice) =>
  html`<div class="notice refused" role="alert" data-testid="refusal"><strong>Refused:</strong> ${n.text}</div>`;
