import Router from '@koa/router';
import { AppError, OUTAGE_RETRY_AFTER_SECONDS } from '../../lib/errors';
import { logger } from '../../lib/logger';
import { recordConsoleSession } from '../audit/recorder';
import type { ApiDeps } from '../deps';
import { dependencyWatchOf } from '../health/dependencies';
import { toResponseError } from '../middleware/errors';
import { devIdpOf } from '../identity/dev-idp';
import { configuredIssuers, IdTokenVerifier } from '../identity/id-token-verifier';
import type { Activity, QueuePage } from './api-types';
import { asset } from './assets';
import { COMMANDS, isCommand } from './commands';
import { consoleKit, fragment, isHtmx, need, uuid, type ConsoleCtx, type ConsoleState } from './console-kit';
import { deliveryPages } from './delivery-pages';
import { endpointPages } from './endpoint-pages';
import { eventPages } from './event-pages';
import { recoveryPages } from './recovery-pages';
import { chip, refusal } from './format';
import { html } from './html';
import { banner, type Notice } from './layout';
import { auditBody, auditPath } from './pages/audit';
import { fundsBodyA, fundsBodyB, issuedRow } from './pages/funds';
import { doneCard, queueBody, queueCard } from './pages/queue';
import { signInBody } from './pages/sign-in';
import { subscriptionBody } from './pages/subscription';
import { consoleSignIn } from './sign-in';
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * The operator console at /console/ (issue 15): server-rendered pages, htmx for in-place actions.
 * Every read and command goes through the JSON API with the staff member's own access token
 * (api-client.ts); this router holds no data access of its own.
 */
export function consoleRouter(deps: ApiDeps): Router {
  const { config } = deps;
  const router = new Router<ConsoleState>({ prefix: '/console' });
  const kit = consoleKit(deps);
  const { set, links, page, session, form, sameOrigin, publicOrigin } = kit;
  const { clearSession, readPending, readSession, writePending, writeSession } = kit.cookies;
  const dependencies = dependencyWatchOf(deps);
  const devIdp = devIdpOf(config);
  const signIn = consoleSignIn({
    config,
    devIdp,
    verifier: new IdTokenVerifier([...configuredIssuers(config), ...(devIdp ? [devIdp.trustedIssuer()] : [])]),
    tokens: deps.tokens,
    kyc: deps.kyc,
  });
  router.use(async (ctx, next) => {
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('X-Content-Type-Options', 'nosniff');
    try {
      await next();
    } catch (raw) {
      // A page whose data is away answers like the API does: 503 naming PostgreSQL or Temporal, with Retry-After.
      const err = await toResponseError(raw, dependencies);
      const known = err.code !== 'INTERNAL';
      if (!known) logger.error({ err: raw }, 'console page failed');
      const message = known ? `${err.message} (${err.code})` : 'Something went wrong on our side; try again.';
      if (err.status === 503) ctx.set('Retry-After', String(retryAfterOf(err)));
      page(
        ctx,
        err.status,
        'Error',
        'none',
        html`<h1>Cannot show this page</h1><p role="alert">${message}</p><p><a href="/console/">Back to the console</a></p>`,
      );
    }
  });

  router.get('/assets/:name', (ctx) => {
    const file = asset(ctx.params.name!);
    if (!file) return void (ctx.status = 404);
    ctx.type = file.type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = file.body;
  });

  // Sign-in, sign-out: the only routes without a session.
  router.get('/sign-in', (ctx) =>
    page(
      ctx,
      200,
      'Sign in',
      'none',
      signInBody(ctx.query.signed_out === '1' ? { kind: 'ok', text: 'You are signed out.' } : null),
    ),
  );

  router.get('/auth/start', async (ctx) => {
    // The callback lands on PUBLIC_BASE_URL; the pending cookie must be set on that same origin.
    // Only the host can tell a stray address (127.0.0.1 for localhost): the scheme may have been
    // ended by TLS upstream, so it is not asked (docs/decisions/0197-console-origin-behind-tls.md).
    if (ctx.host !== publicOrigin.host) return ctx.redirect(`${publicOrigin.origin}/console/auth/start`);
    const { url, pending } = await signIn.start();
    writePending(ctx, pending);
    ctx.redirect(url);
  });

  router.get('/auth/callback', async (ctx) => {
    const pending = readPending(ctx);
    clearSession(ctx, 'pending');
    try {
      const { accessToken, expiresIn, principal } = await signIn.finish(ctx.query, pending);
      await recordConsoleSession(deps.orm, ctx, principal, 'console.sign_in');
      writeSession(ctx, accessToken, expiresIn);
      ctx.redirect('/console/');
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      page(ctx, err.status, 'Sign in', 'none', signInBody({ kind: 'refused', text: `${err.message} (${err.code})` }));
    }
  });

  router.post('/auth/sign-out', sameOrigin, async (ctx) => {
    // An expired or unreadable session signs out all the same, without an audit entry (no one to name).
    const principal = await deps.tokens.verify(readSession(ctx) ?? '').catch(() => null);
    if (principal) await recordConsoleSession(deps.orm, ctx, principal, 'console.sign_out');
    clearSession(ctx, 'session');
    ctx.status = 303;
    ctx.redirect('/console/sign-in?signed_out=1');
  });

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
    if (set === 'B') return page(ctx, 200, 'Funds', 'funds', await fundsB(ctx, null));
    const referenceCode = typeof ctx.query.reference_code === 'string' ? ctx.query.reference_code.trim() : '';
    if (!referenceCode) return page(ctx, 200, 'Funds', 'funds', fundsBodyA({ referenceCode, found: null }, null));
    const found = await ctx.state.api.get(`/issuance/subscriptions/by-reference/${encodeURIComponent(referenceCode)}`);
    page(
      ctx,
      found.ok ? 200 : found.status,
      'Funds',
      'funds',
      fundsBodyA({ referenceCode, found: found.ok ? found.data : null }, found.ok ? null : refusal(found)),
    );
  });

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

  router.get('/audit', session, async (ctx) =>
    page(ctx, 200, 'Audit trail', 'none', auditBody(await ctx.state.api.get(auditPath(ctx.query)), ctx.query)),
  );

  endpointPages(router, kit);
  deliveryPages(router, kit);
  recoveryPages(router, kit);
  eventPages(router, kit);

  /** A page of the review queue: its head, or what follows `cursor`. */
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

  async function fundsB(ctx: ConsoleCtx, notice: Notice | null) {
    const list = need(await ctx.state.api.get('/issuance/subscriptions?status=approved&limit=100'), 'subscriptions');
    return fundsBodyB([...list.items].reverse(), ctx.state.principal, notice);
  }

  return router;
}

const retryAfterOf = (err: AppError) =>
  (err.details as { retry_after_seconds?: number } | null | undefined)?.retry_after_seconds ??
  OUTAGE_RETRY_AFTER_SECONDS;
