import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { Orm } from '../../db/orm';
import type { SandboxLedger, SessionOutcome } from '../../payments';
import { closedPage, sessionPage } from './sandbox-pages';
import { validate } from '../middleware/validate';

const Params = z.object({ kind: z.enum(['setup', 'checkout']), session_id: z.uuid() });
const Outcome = z.enum(['complete', 'cancel', 'decline']);

/**
 * The sandbox's hosted pages at each session_url (/sandbox/setup/{id}, /sandbox/checkout/{id}).
 * No login: like a processor's checkout link, the unguessable session id is the capability.
 * A choice is a plain form POST, answered with a 303 to the investor's successUrl or cancelUrl.
 */
export function sandboxPagesRouter(_orm: Orm, ledger: SandboxLedger): Router {
  const router = new Router({ prefix: '/sandbox' });
  const modeOf = (kind: 'setup' | 'checkout') => (kind === 'setup' ? 'setup' : 'payment');

  const html = (ctx: Context, status: number, body: string) => {
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    // The page is the processor's: nothing from elsewhere may frame it or run in it.
    ctx.set(
      'Content-Security-Policy',
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:; frame-ancestors 'none'",
    );
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  };

  router.get(
    '/:kind/:session_id',
    validate({ summary: 'The sandbox hosted setup or checkout page (HTML)' }, async (ctx) => {
      const p = Params.safeParse(ctx.params);
      if (!p.success) return html(ctx, 404, closedPage(null));
      const s = await ledger.session(p.data.session_id);
      if (!s || s.mode !== modeOf(p.data.kind)) return html(ctx, 404, closedPage(null));
      if (s.status !== 'open' || s.expiresAt <= new Date()) return html(ctx, 410, closedPage(s));
      html(ctx, 200, sessionPage(s, `/sandbox/${p.data.kind}/${s.id}`));
    }),
  );

  router.post(
    '/:kind/:session_id/:outcome',
    validate(
      { status: 303, summary: "The sandbox page's form: link, pay, decline or cancel, then redirect" },
      async (ctx) => {
        const p = Params.safeParse(ctx.params);
        const outcome = Outcome.safeParse(ctx.params.outcome);
        if (!p.success || !outcome.success) return html(ctx, 404, closedPage(null));
        const s = await ledger.session(p.data.session_id);
        if (!s || s.mode !== modeOf(p.data.kind) || (s.mode === 'setup' && outcome.data === 'decline'))
          return html(ctx, 404, closedPage(null));
        const result = await ledger.finishSession(s.id, outcome.data as SessionOutcome);
        if (!result) return html(ctx, 409, closedPage(await ledger.session(s.id)));
        ctx.status = 303;
        ctx.redirect(result.redirectTo);
      },
    ),
  );

  return router;
}
