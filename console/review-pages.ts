import { AppError } from '../lib/errors';
import type { Activity, QueuePage, RefundIntentList } from './api-types';
import { COMMANDS, isCommand } from './commands';
import { fragment, isHtmx, need, uuid, type ConsoleCtx, type ConsoleKit, type ConsoleRouter } from './console-kit';
import { formKeyOf, keyAfter, sendOnce } from './form-keys';
import { chip, refusal } from './format';
import { html } from '../lib/html';
import { banner, type Notice } from './layout';
import { fundsBodyA, fundsBodyB, issuedRow, type RefundLookup } from './views/funds-view';
import { doneCard, queueBody, queueCard } from './views/queue-view';
import { subscriptionBody } from './views/subscription-detail-view';
import { refundIntentsSection } from './views/refund-intents-view';

/**
 * Staff's pages: the review queue and its decisions, a subscription's detail, and funds
 * (Set A reconciles wires and checks by reference code, Set B issues shares).
 */
export function reviewPages(router: ConsoleRouter, kit: ConsoleKit): void {
  const { set, links, page, session, form, sameOrigin } = kit;
  // A double submit's second request waits for the first's answer at most as long as a command may run.
  const twinWaitMs = kit.config.COMMAND_TIMEOUT_MS + 5_000;
  const staleForm: Notice = {
    kind: 'refused',
    text: 'This form is from an older page and was not sent: check it and send it again.',
  };

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

  // Where a refund or a reconciliation lands once done (POST-redirect-GET: a reload sends nothing again);
  // `done` only picks the words, the figures are read fresh.
  router.get('/funds', session, async (ctx) => {
    const wanted = typeof ctx.query.refund === 'string' ? ctx.query.refund.trim() : '';
    const looked = wanted ? await refundLookup(ctx, wanted) : null;
    const lookup: RefundLookup = looked?.lookup ?? { subscriptionId: '', found: null };
    const refunded = ctx.query.done === 'refunded' && lookup.found ? refundedNotice(lookup.found) : null;
    const refunds = { lookup, principal: ctx.state.principal };
    if (set === 'B')
      return page(ctx, 200, 'Funds', 'funds', await fundsB(ctx, refunded ?? looked?.notice ?? null, lookup));
    const referenceCode = typeof ctx.query.reference_code === 'string' ? ctx.query.reference_code.trim() : '';
    if (!referenceCode)
      return page(
        ctx,
        200,
        'Funds',
        'funds',
        fundsBodyA({ referenceCode, found: null }, refunded ?? looked?.notice ?? null, refunds),
      );
    const found = await ctx.state.api.get(`/issuance/subscriptions/by-reference/${encodeURIComponent(referenceCode)}`);
    const reconciled: Notice | null =
      ctx.query.done === 'reconciled' && found.ok
        ? {
            kind: 'ok',
            text: `Funds of ${found.data.total_amount} ${found.data.currency} reconciled: the subscription is now ${found.data.status.replaceAll('_', ' ')}.`,
          }
        : null;
    page(
      ctx,
      found.ok ? 200 : found.status,
      'Funds',
      'funds',
      fundsBodyA(
        { referenceCode, found: found.ok ? found.data : null },
        found.ok ? (reconciled ?? refunded) : refusal(found),
        refunds,
      ),
    );
  });

  // Both sets: an admin refunds through the API (docs/decisions/0284-refunds.md); the API refuses what may not be.
  // Under the form's key, then off to the funds page (docs/decisions/0375-console-forms-carry-their-key.md).
  router.post('/funds/refund', sameOrigin, session, form, async (ctx) => {
    const body = ctx.request.body as Record<string, unknown>;
    const id = uuid(typeof body.subscription_id === 'string' ? body.subscription_id : '');
    const amount = typeof body.amount === 'string' ? body.amount.trim() : '';
    const reason = typeof body.reason === 'string' ? body.reason : '';
    const key = formKeyOf(body);
    if (!key) return refundPage(ctx, 400, staleForm, { ...(await refundLookup(ctx, id)).lookup, amount });
    const answer = await sendOnce(
      () =>
        ctx.state.api.post(
          `/issuance/subscriptions/${id}/refund`,
          { reason, ...(amount ? { amount } : {}) },
          { idempotencyKey: key },
        ),
      twinWaitMs,
    );
    if (answer.ok) {
      ctx.status = 303;
      return ctx.redirect(`/console/funds?refund=${id}&done=refunded`);
    }
    const again = await refundLookup(ctx, id);
    await refundPage(ctx, answer.status, refusal(answer), { ...again.lookup, amount, formKey: keyAfter(answer, key) });
  });

  async function refundPage(ctx: ConsoleCtx, status: number, notice: Notice, lookup: RefundLookup) {
    if (set === 'B') return page(ctx, status, 'Funds', 'funds', await fundsB(ctx, notice, lookup));
    page(
      ctx,
      status,
      'Funds',
      'funds',
      fundsBodyA({ referenceCode: '', found: null }, notice, { lookup, principal: ctx.state.principal }),
    );
  }

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
    // Under the form's key, then off to the funds page (docs/decisions/0375-console-forms-carry-their-key.md).
    router.post('/funds/reconcile', sameOrigin, session, form, async (ctx) => {
      const body = ctx.request.body as Record<string, unknown>;
      const referenceCode = typeof body.reference_code === 'string' ? body.reference_code.trim() : '';
      const amount = typeof body.amount === 'string' ? body.amount.trim() : '';
      const key = formKeyOf(body);
      const answer = key
        ? await sendOnce(
            () => ctx.state.api.post('/issuance/reconciliations', { referenceCode, amount }, { idempotencyKey: key }),
            twinWaitMs,
          )
        : null;
      if (answer?.ok) {
        ctx.status = 303;
        return ctx.redirect(`/console/funds?reference_code=${encodeURIComponent(referenceCode)}&done=reconciled`);
      }
      const found = await ctx.state.api.get(
        `/issuance/subscriptions/by-reference/${encodeURIComponent(referenceCode)}`,
      );
      page(
        ctx,
        answer ? answer.status : 400,
        'Funds',
        'funds',
        fundsBodyA(
          {
            referenceCode,
            found: found.ok ? found.data : null,
            amount,
            ...(answer && key ? { formKey: keyAfter(answer, key) } : {}),
          },
          answer ? refusal(answer) : staleForm,
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
    const [sub, activity, refunds] = await Promise.all([
      ctx.state.api.get(`/issuance/subscriptions/${id}`),
      ctx.state.api.get<Activity>(`/issuance/subscriptions/${id}/activity`),
      ctx.state.api.get<RefundIntentList>(`/issuance/subscriptions/${id}/refunds`),
    ]);
    return html`${subscriptionBody(
      need(sub, 'the subscription'),
      activity.ok ? activity.data : { events: [], deliveries: [] },
      ctx.state.principal,
      links,
      set,
      notice,
    )}${refundIntentsSection(refunds.ok ? refunds.data.items : [])}`;
  }

  async function fundsB(ctx: ConsoleCtx, notice: Notice | null, refund?: RefundLookup) {
    const list = need(await ctx.state.api.get('/issuance/subscriptions?status=approved&limit=100'), 'subscriptions');
    return fundsBodyB([...list.items].reverse(), ctx.state.principal, notice, refund);
  }
}

/** What the funds page says once a refund is done: the subscription's money as it now stands. */
function refundedNotice(s: {
  amount_refunded?: string | null;
  amount_received?: string | null;
  currency: string;
}): Notice {
  return {
    kind: 'ok',
    text: `Refunded: ${s.amount_refunded ?? '0'} of ${s.amount_received ?? '0'} ${s.currency} has gone back.`,
  };
}
