import { AppError } from '../lib/errors';
import type { Activity, QueuePage } from './api-types';
import { COMMANDS, isCommand } from './commands';
import { fragment, isHtmx, need, uuid, type ConsoleCtx, type ConsoleKit, type ConsoleRouter } from './console-kit';
import { chip, refusal } from './format';
import { html } from '../lib/html';
import { banner, type Notice } from './layout';
import { fundsBodyA, fundsBodyB, issuedRow, type RefundLookup } from './views/funds-view';
import { doneCard, queueBody, queueCard } from './views/queue-view';
import { subscriptionBody } from './views/subscription-detail-view';

/**
 * Staff's pages (issue 15): the review queue and its decisions, a subscription's detail, and funds
 * (Set A reconciles wires and checks by reference code, Set B issues shares).
 */
export function reviewPages(router: ConsoleRouter, kit: ConsoleKit): void {
  const { set, links, page, session, form, sameOrigin } = kit;

  router.get('/', session, async (ctx) => {
    const cursor = typeof ctx.query.cursor === 'string' ? ctx.query.cursor : undefined;
    page(ctx, 200, 'Review queue', 'queue', queueBody(await queue(ctx, cursor), ctx.state.principal, null));
  });

  router.get('/subscriptions/:id', session, async (ctx) => {
    page(ctx, 200, 'Subscription', 'queue', await detail(ctx, uuid(ctx.params.id), null));
  });

  router.post('/subscriptions/:id/:command', sameOrigin, session, form, async (ctx) => {
    const id = uuid(ctx.params.id);
    const name = ctx.params.command!;
    if (!isCommand(name)) throw new AppError(404, 'ROUTE_NOT_FOUND', 'No such command');
    const body = ctx.request.body as Record<string, unknown>;
    const c = COMMANDS[name];
    const answer = await ctx.state.api.post(
      `/issuance/subscriptions/${id}/${name}`,
      c.reason ? { reason: typeof body.reason === 'string' ? body.reason : '' } : {},
    );
    const notice: Notice = answer.ok ? { kind: 'ok', text: `${c.done}.` } : refusal(answer);
    const from = body.from;
    if (from === 'detail')
      return page(ctx, answer.ok ? 200 : answer.status, 'Subscription', 'queue', await detail(ctx, id, notice));
    if (from === 'funds') {
      if (isHtmx(ctx))
        return fragment(
          ctx,
          issuedRow(answer.ok ? answer.data : (await ctx.state.api.get(`/issuance/subscriptions/${id}`)).data, notice),
        );
      return page(ctx, answer.ok ? 200 : answer.status, 'Funds', 'funds', await fundsB(ctx, notice));
    }
    const head = await queue(ctx);
    if (!isHtmx(ctx))
      return page(
        ctx,
        answer.ok ? 200 : answer.status,
        'Review queue',
        'queue',
        queueBody(head, ctx.state.principal, notice),
      );
    if (answer.ok) return fragment(ctx, doneCard(answer.data, c.done));
    const item = head.items.find((i) => i.subscription.id === id);
    if (item) return fragment(ctx, queueCard(item, ctx.state.principal, notice));
    // It left the queue meanwhile (someone else decided): say so, with the refusal.
    const now = await ctx.state.api.get(`/issuance/subscriptions/${id}`);
    return fragment(
      ctx,
      html`<article id="card-${id}" class="queue-card done" data-testid="queue-card-${id}">${banner(notice)}
      ${now.ok ? html`<p>The subscription is now ${chip(now.data.status)}. <a href="/console/subscriptions/${id}">Open subscription</a></p>` : ''}</article>`,
    );
  });

  router.get('/funds', session, async (ctx) => {
    const wanted = typeof ctx.query.refund === 'string' ? ctx.query.refund.trim() : '';
    const looked = wanted ? await refundLookup(ctx, wanted) : null;
    const lookup: RefundLookup = looked?.lookup ?? { subscriptionId: '', found: null };
    const refunds = { lookup, principal: ctx.state.principal };
    if (set === 'B') return page(ctx, 200, 'Funds', 'funds', await fundsB(ctx, looked?.notice ?? null, lookup));
    const referenceCode = typeof ctx.query.reference_code === 'string' ? ctx.query.reference_code.trim() : '';
    if (!referenceCode)
      return page(
        ctx,
        200,
        'Funds',
        'funds',
        fundsBodyA({ referenceCode, found: null }, looked?.notice ?? null, refunds),
      );
    const found = await ctx.state.api.get(`/issuance/subscriptions/by-reference/${encodeURIComponent(referenceCode)}`);
    page(
      ctx,
      found.ok ? 200 : found.status,
      'Funds',
      'funds',
      fundsBodyA({ referenceCode, found: found.ok ? found.data : null }, found.ok ? null : refusal(found), refunds),
    );
  });

  // Both sets: an admin refunds through the API (docs/decisions/0284-refunds.md); the API refuses what may not be.
  router.post('/funds/refund', sameOrigin, session, form, async (ctx) => {
    const body = ctx.request.body as Record<string, unknown>;
    const id = uuid(typeof body.subscription_id === 'string' ? body.subscription_id : '');
    const amount = typeof body.amount === 'string' ? body.amount.trim() : '';
    const reason = typeof body.reason === 'string' ? body.reason : '';
    const answer = await ctx.state.api.post(`/issuance/subscriptions/${id}/refund`, {
      reason,
      ...(amount ? { amount } : {}),
    });
    const notice: Notice = answer.ok
      ? {
          kind: 'ok',
          text: `Refunded: ${answer.data.amount_refunded ?? '0'} of ${answer.data.amount_received ?? '0'} ${answer.data.currency} has gone back.`,
        }
      : refusal(answer);
    const again = answer.ok ? null : await refundLookup(ctx, id);
    const lookup: RefundLookup = answer.ok
      ? { subscriptionId: id, found: answer.data }
      : { ...(again?.lookup ?? { subscriptionId: id, found: null }), amount };
    const status = answer.ok ? 200 : answer.status;
    if (set === 'B') return page(ctx, status, 'Funds', 'funds', await fundsB(ctx, notice, lookup));
    page(
      ctx,
      status,
      'Funds',
      'funds',
      fundsBodyA({ referenceCode: '', found: null }, notice, { lookup, principal: ctx.state.principal }),
    );
  });

  async function refundLookup(ctx: ConsoleCtx, id: string): Promise<{ lookup: RefundLookup; notice: Notice | null }> {
    const valid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
    const found = valid ? await ctx.state.api.get(`/issuance/subscriptions/${id}`) : null;
    if (found?.ok) return { lookup: { subscriptionId: id, found: found.data }, notice: null };
    return {
      lookup: { subscriptionId: id, found: null },
      notice: found ? refusal(found) : { kind: 'refused', text: 'A subscription id is a UUID.' },
    };
  }

  if (set === 'A') {
    router.post('/funds/reconcile', sameOrigin, session, form, async (ctx) => {
      const body = ctx.request.body as Record<string, unknown>;
      const referenceCode = typeof body.reference_code === 'string' ? body.reference_code.trim() : '';
      const amount = typeof body.amount === 'string' ? body.amount.trim() : '';
      const answer = await ctx.state.api.post('/issuance/reconciliations', { referenceCode, amount });
      const notice: Notice = answer.ok
        ? {
            kind: 'ok',
            text: `Funds of ${amount} reconciled: the subscription is now ${answer.data.status.replaceAll('_', ' ')}.`,
          }
        : refusal(answer);
      const found = answer.ok
        ? answer
        : await ctx.state.api.get(`/issuance/subscriptions/by-reference/${encodeURIComponent(referenceCode)}`);
      page(
        ctx,
        answer.ok ? 200 : answer.status,
        'Funds',
        'funds',
        fundsBodyA(
          { referenceCode, found: found.ok ? found.data : null, amount: answer.ok ? undefined : amount },
          notice,
        ),
      );
    });
  }

  async function queue(ctx: ConsoleCtx, cursor?: string): Promise<QueuePage> {
    const answer = await ctx.state.api.get<QueuePage>(
      `/issuance/review-queue${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    return need(answer, 'the review queue');
  }

  async function detail(ctx: ConsoleCtx, id: string, notice: Notice | null) {
    const [sub, activity] = await Promise.all([
      ctx.state.api.get(`/issuance/subscriptions/${id}`),
      ctx.state.api.get<Activity>(`/issuance/subscriptions/${id}/activity`),
    ]);
    return subscriptionBody(
      need(sub, 'the subscription'),
      activity.ok ? activity.data : { events: [], deliveries: [] },
      ctx.state.principal,
      links,
      set,
      notice,
    );
  }

  async function fundsB(ctx: ConsoleCtx, notice: Notice | null, refund?: RefundLookup) {
    const list = need(await ctx.state.api.get('/issuance/subscriptions?status=approved&limit=100'), 'subscriptions');
    return fundsBodyB([...list.items].reverse(), ctx.state.principal, notice, refund);
  }
}
