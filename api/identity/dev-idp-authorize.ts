import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Context } from 'koa';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ROLES } from '../../domain/principal';
import type { Config } from '../../lib/runtime/config';
import { html } from '../../lib/html';
import { DEV_IDP_AUDIENCE, devIdpOf, type DevIdp } from '../../identity';

const CODE_TTL_MS = 60_000;
/**
 * A UUID, for the form's `pattern`. Browsers compile a pattern with the `v` flag, where a bare `-`
 * in a character class is a syntax error (and the pattern is then ignored): none is used here.
 */
const UUID_PATTERN = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const ID_TOKEN_TTL_SECONDS = 600;

/** The authorization request (OIDC core §3.1.2.1), code flow with PKCE S256 only. */
const AuthorizeQuery = z.object({
  response_type: z.literal('code'),
  client_id: z.literal(DEV_IDP_AUDIENCE),
  redirect_uri: z.url(),
  scope: z.string().refine((s) => s.split(' ').includes('openid'), 'must include openid'),
  state: z.string().min(16).max(200),
  nonce: z.string().min(16).max(200),
  code_challenge: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  code_challenge_method: z.literal('S256'),
});
type AuthorizeQuery = z.infer<typeof AuthorizeQuery>;

const SignInForm = AuthorizeQuery.extend({
  user_id: z.string().trim().min(1).max(255),
  org_id: z.uuid(),
  roles: z.union([z.enum(ROLES), z.array(z.enum(ROLES)).min(1)]).transform((r) => (Array.isArray(r) ? r : [r])),
});

const TokenForm = z.object({
  grant_type: z.literal('authorization_code'),
  code: z.string().min(1).max(200),
  redirect_uri: z.url(),
  client_id: z.literal(DEV_IDP_AUDIENCE),
  code_verifier: z.string().regex(/^[A-Za-z0-9._~-]{43,128}$/),
});

interface IssuedCode {
  request: AuthorizeQuery;
  userId: string;
  orgId: string;
  roles: (typeof ROLES)[number][];
  expiresAt: number;
}

/**
 * The development identity provider's browser sign-in: an authorize page where you say who you
 * are (it is a development provider: nobody checks), a one-time code back to the console's
 * callback, and a token endpoint that trades the code (with its PKCE verifier) for an ID token.
 * Mounted before the JSON body parser because both POSTs are forms. Codes live in this process,
 * as does the provider's key: the dev IdP is a single-process tool.
 */
export function devIdpAuthorizeRouter(config: Config): Router {
  const router = new Router({ prefix: '/dev-idp' });
  const idp = devIdpOf(config);
  if (!idp) return router;
  const codes = new Map<string, IssuedCode>();
  const form = bodyParser({ enableTypes: ['form'], formLimit: '16kb', encoding: 'utf-8' });
  // Only this service's own console may receive codes: a dev IdP must not hand tokens to other sites.
  const allowedRedirect = `${config.PUBLIC_BASE_URL}/console/auth/callback`;

  router.get('/authorize', (ctx) => {
    const q = AuthorizeQuery.safeParse(ctx.query);
    if (!q.success) return page(ctx, 400, refusal('The sign-in request is not valid.'));
    if (q.data.redirect_uri !== allowedRedirect)
      return page(ctx, 400, refusal('This provider only signs in to this service’s console.'));
    page(ctx, 200, signInForm(q.data));
  });

  router.post('/authorize', form, (ctx) => {
    const f = SignInForm.safeParse(ctx.request.body);
    if (!f.success)
      return page(ctx, 400, refusal('Give a user id, an organisation id (a UUID) and at least one role.'));
    if (f.data.redirect_uri !== allowedRedirect)
      return page(ctx, 400, refusal('This provider only signs in to this service’s console.'));
    sweep(codes);
    const code = randomBytes(32).toString('base64url');
    const { user_id, org_id, roles, ...request } = f.data;
    codes.set(code, { request, userId: user_id, orgId: org_id, roles, expiresAt: Date.now() + CODE_TTL_MS });
    const back = new URL(request.redirect_uri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', request.state);
    ctx.status = 303;
    ctx.redirect(back.toString());
  });

  router.post('/token', form, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const f = TokenForm.safeParse(ctx.request.body);
    if (!f.success) return oauthError(ctx, 'invalid_request');
    const issued = codes.get(f.data.code);
    // One use only, whatever the outcome: a code that was tried with a wrong verifier is spent.
    codes.delete(f.data.code);
    if (
      !issued ||
      issued.expiresAt < Date.now() ||
      issued.request.redirect_uri !== f.data.redirect_uri ||
      !pkceMatches(f.data.code_verifier, issued.request.code_challenge)
    ) {
      return oauthError(ctx, 'invalid_grant');
    }
    const idToken = await mint(idp, issued);
    ctx.body = { id_token: idToken, token_type: 'Bearer', expires_in: ID_TOKEN_TTL_SECONDS };
  });

  return router;
}

const mint = (idp: DevIdp, c: IssuedCode) =>
  idp.mintIdToken({
    userId: c.userId,
    orgId: c.orgId,
    roles: c.roles,
    ttlSeconds: ID_TOKEN_TTL_SECONDS,
    nonce: c.request.nonce,
  });

function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

function sweep(codes: Map<string, IssuedCode>): void {
  const now = Date.now();
  for (const [code, c] of codes) if (c.expiresAt < now) codes.delete(code);
}

function oauthError(ctx: Context, error: string): void {
  ctx.status = 400;
  ctx.body = { error };
}

function page(ctx: Context, status: number, main: ReturnType<typeof html>): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  // img-src data: for Pico's icons (the checkbox tick, the select arrow), which are data: SVGs.
  ctx.set(
    'Content-Security-Policy',
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'",
  );
  ctx.body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · Development identity provider</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/pico.min.css"><link rel="stylesheet" href="/console/assets/console.css"></head>
<body><main class="container narrow">${main}</main></body></html>`.text;
}

const refusal = (message: string) => html`<h1>Cannot sign in</h1><p role="alert">${message}</p>`;

function signInForm(q: AuthorizeQuery) {
  const hidden = Object.entries(q).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return html`<h1>Development identity provider</h1>
<p>Not for production: whoever you say you are is who you are.</p>
<form method="post" action="/dev-idp/authorize">
  ${hidden}
  <label for="user_id">User id</label>
  <input id="user_id" name="user_id" required autocomplete="username" autofocus>
  <label for="org_id">Organisation id</label>
  <input id="org_id" name="org_id" required pattern="${UUID_PATTERN}" aria-describedby="org_hint">
  <small id="org_hint">The organisation’s UUID.</small>
  <fieldset><legend>Roles</legend>
    ${ROLES.map((r) => html`<label><input type="checkbox" name="roles" value="${r}" ${r === 'staff' ? html`checked` : ''}> ${r}</label>`)}
  </fieldset>
  <button type="submit">Sign in</button>
</form>`;
}
