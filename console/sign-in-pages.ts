import type { Context } from 'koa';
import { AppError } from '../lib/errors';
import type { Principal } from '../domain/principal';
import { configuredIssuers, consoleSessions, devIdpOf, IdTokenVerifier } from '../identity';
import type { ConsoleDeps } from './console-deps';
import type { ConsoleKit, ConsoleRouter } from './console-kit';
import { signInBody } from './views/sign-in-view';
import { consoleSignIn } from './sign-in';

/**
 * Signing in and out (issue 15): the only console routes without a session. Sign-in runs OpenID
 * Connect with PKCE against the configured identity provider (sign-in.ts); each is an audit entry.
 */
export function signInPages(router: ConsoleRouter, kit: ConsoleKit, deps: ConsoleDeps): void {
  const { config, page, sameOrigin, publicOrigin } = kit;
  const { clearSession, readPending, readSession, writePending, writeSession } = kit.cookies;
  const devIdp = devIdpOf(config);
  const { knex } = deps;
  const signIn = consoleSignIn({
    config,
    devIdp,
    verifier: new IdTokenVerifier([...configuredIssuers(config), ...(devIdp ? [devIdp.trustedIssuer()] : [])]),
    tokens: deps.tokens,
    kyc: deps.kyc,
  });

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
      await opened(ctx, principal);
      writeSession(ctx, accessToken, expiresIn);
      ctx.redirect('/console/');
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      page(ctx, err.status, 'Sign in', 'none', signInBody({ kind: 'refused', text: `${err.message} (${err.code})` }));
    }
  });

  router.post('/auth/sign-out', sameOrigin, async (ctx) => {
    // An expired, ended or unreadable session signs out all the same, without an audit entry (no one to name).
    const principal = await deps.tokens.verify(readSession(ctx) ?? '', { fresh: true }).catch(() => null);
    if (principal?.consoleSession) await ended(ctx, principal, principal.consoleSession);
    clearSession(ctx, 'session');
    ctx.status = 303;
    ctx.redirect('/console/sign-in?signed_out=1');
  });

  /** The session's record and its audit entry, in one transaction (decision 0271). */
  async function opened(ctx: Context, principal: Principal): Promise<void> {
    await knex().transaction(async (trx) => {
      await consoleSessions.open(trx, {
        id: principal.consoleSession!,
        org_id: principal.orgId,
        user_id: principal.userId,
        roles: principal.roles,
        client_address: ctx.ip || null,
        user_agent: ctx.get('user-agent') || null,
        maxSeconds: config.CONSOLE_SESSION_MAX_SECONDS,
      });
      await deps.recordSession(trx, ctx, principal, 'console.sign_in');
    });
  }

  /** Signing out revokes the session's record, so its cookie and tokens are refused from now on. */
  async function ended(ctx: Context, principal: Principal, sessionId: string): Promise<void> {
    await knex().transaction(async (trx) => {
      await consoleSessions.revoke(trx, principal.orgId, sessionId, principal.userId);
      await deps.recordSession(trx, ctx, principal, 'console.sign_out');
    });
    deps.tokens.forget('session', sessionId);
  }
}
