import type { Endpoint, Recovery, RecoveryList } from './api-types';
import {
  field,
  fragment,
  isHtmx,
  need,
  utcOf,
  uuid,
  type ConsoleCtx,
  type ConsoleKit,
  type ConsoleRouter,
} from './console-kit';
import { refusal } from './format';
import { html } from '../lib/html';
import { banner, type Notice } from './layout';
import { progressBlock, recoveryBody, recoveryListBody } from './views/recovery-view';

const DONE: Record<string, Notice> = {
  started: { kind: 'ok', text: 'Recovery started.' },
  running: { kind: 'ok', text: 'A recovery of this endpoint was already running: this is it.' },
  cancelling: { kind: 'ok', text: 'Cancelling: the recovery stops after the retries in flight.' },
};

/**
 * Bulk recovery of an endpoint over the JSON API's (docs/decisions/0226-portal-a-recovery-has-its-own-page.md):
 * start, watch live, cancel.
 */
export function recoveryPages(router: ConsoleRouter, kit: ConsoleKit): void {
  const { page, session, sameOrigin, form, api } = kit;
  const path = (endpointId: string) => `${api.endpoints}/${endpointId}/recoveries`;
  const toRecovery = (ctx: ConsoleCtx, r: { id: string; endpoint_id: string }, done: string) => {
    ctx.status = 303;
    ctx.redirect(`/console/webhooks/${r.endpoint_id}/recoveries/${r.id}?done=${done}`);
  };

  router.post('/webhooks/:id/recoveries', sameOrigin, session, form, async (ctx) => {
    const id = uuid(ctx.params.id);
    const since = field(ctx.request.body, 'since');
    const until = field(ctx.request.body, 'until');
    const mode = field(ctx.request.body, 'mode');
    const answer = await ctx.state.api.post<Recovery>(path(id), {
      ...(mode && { mode }),
      since: utcOf(since) ?? since,
      ...(until && { until: utcOf(until) ?? until }),
    });
    if (answer.ok) return toRecovery(ctx, answer.data, 'started');
    const running = (answer.error?.details as { recovery?: Recovery } | undefined)?.recovery;
    if (running) return toRecovery(ctx, running, 'running');
    const back = html`<p><a href="/console/webhooks/${id}">Back to the endpoint</a></p>`;
    page(
      ctx,
      answer.status,
      'Recovery',
      'webhooks',
      html`<h1>Recovery not started</h1>${banner(refusal(answer))}${back}`,
    );
  });

  router.get('/webhooks/:id/recoveries', session, async (ctx) => {
    const id = uuid(ctx.params.id);
    const cursor = field(ctx.query, 'cursor');
    const self = `/console/webhooks/${id}/recoveries${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`;
    const list = need(
      await ctx.state.api.get<RecoveryList>(`${path(id)}${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`),
      'the recoveries',
    );
    const e = need(await ctx.state.api.get<Endpoint>(`${api.endpoints}/${id}`), 'the endpoint');
    const done = field(ctx.query, 'done');
    page(
      ctx,
      200,
      'Recoveries',
      'webhooks',
      recoveryListBody(e, list, self, Object.hasOwn(DONE, done) ? DONE[done]! : null),
    );
  });

  router.get('/webhooks/:id/recoveries/:recovery_id', session, async (ctx) => {
    const done = field(ctx.query, 'done');
    await show(ctx, uuid(ctx.params.id), uuid(ctx.params.recovery_id), Object.hasOwn(DONE, done) ? DONE[done]! : null);
  });

  router.post('/webhooks/:id/recoveries/:recovery_id/cancel', sameOrigin, session, form, async (ctx) => {
    const [id, recoveryId] = [uuid(ctx.params.id), uuid(ctx.params.recovery_id)];
    const answer = await ctx.state.api.delete(`${path(id)}/${recoveryId}`);
    if (answer.ok && field(ctx.request.body ?? {}, 'back') === 'list') {
      ctx.status = 303;
      return ctx.redirect(`/console/webhooks/${id}/recoveries?done=cancelling`);
    }
    if (answer.ok) return toRecovery(ctx, { id: recoveryId, endpoint_id: id }, 'cancelling');
    await show(ctx, id, recoveryId, refusal(answer), answer.status);
  });

  async function show(ctx: ConsoleCtx, id: string, recoveryId: string, notice: Notice | null, status = 200) {
    const r = need(await ctx.state.api.get<Recovery>(`${path(id)}/${recoveryId}`), 'the recovery');
    if (isHtmx(ctx)) return fragment(ctx, progressBlock(r));
    const e = need(await ctx.state.api.get<Endpoint>(`${api.endpoints}/${id}`), 'the endpoint');
    page(ctx, status, 'Recovery', 'webhooks', recoveryBody(e, r, notice));
  }
}
