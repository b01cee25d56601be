import Router from '@koa/router';
import { AppError, OUTAGE_RETRY_AFTER_SECONDS } from '../lib/errors';
import { logger } from '../lib/runtime/logger';
import type { ConsoleDeps } from './console-deps';
import { asset } from './assets';
import { attentionPages } from './attention-pages';
import { consoleKit, type ConsoleState } from './console-kit';
import { deliveryPages } from './delivery-pages';
import { endpointPages } from './endpoint-pages';
import { endpointHeaderPages } from './endpoint-header-pages';
import { eventPages } from './event-pages';
import { catalogPages } from './catalog-pages';
import { offeringPages } from './offering-pages';
import { recoveryPages } from './recovery-pages';
import { reviewPages } from './review-pages';
import { signInPages } from './sign-in-pages';
import { html } from '../lib/html';
import { auditBody, auditPath } from './views/audit-view';
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * The operator console at /console/ (docs/decisions/0099-console-stack.md): server-rendered pages, htmx for
 * in-place actions. Every read and command goes through the JSON API with the staff member's own access token
 * (api-client.ts); this router holds no data access of its own.
 */
export function consoleRouter(deps: ConsoleDeps): Router {
  const router = new Router<ConsoleState>({ prefix: '/console' });
  const kit = consoleKit(deps);
  const { page, session } = kit;
  router.use(async (ctx, next) => {
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('X-Content-Type-Options', 'nosniff');
    try {
      await next();
    } catch (raw) {
      // A page whose data is away answers like the API does: 503 naming PostgreSQL or Temporal, with Retry-After.
      const err = await deps.pageError(raw);
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

  router.get('/audit', session, async (ctx) =>
    page(ctx, 200, 'Audit trail', 'none', auditBody(await ctx.state.api.get(auditPath(ctx.query)), ctx.query)),
  );

  signInPages(router, kit, deps);
  reviewPages(router, kit);
  offeringPages(router, kit);
  attentionPages(router, kit);
  endpointPages(router, kit);
  endpointHeaderPages(router, kit);
  deliveryPages(router, kit);
  recoveryPages(router, kit);
  eventPages(router, kit);
  catalogPages(router, kit);

  return router;
}

const retryAfterOf = (err: AppError) =>
  (err.details as { retry_after_seconds?: number } | null | undefined)?.retry_after_seconds ??
  OUTAGE_RETRY_AFTER_SECONDS;
