import type Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Context, Next } from 'koa';
import { decodeJwt } from 'jose';
import { z } from 'zod';
import { AppError } from '../lib/errors';
import { consoleSessions } from '../identity';
import type { Principal } from '../domain/principal';
import type { ConsoleDeps } from './console-deps';
import { NOTIFICATION_PATHS } from '../api/notifications/paths';
import { apiClient, type ApiAnswer, type ApiClient } from './api-client';
import type { Html } from '../lib/html';
import { layout, type Section } from './layout';
import { temporalLinks } from './links';
import { consoleCookies } from './session-cookies';

export interface ConsoleState {
  principal: Principal;
  api: ApiClient;
}
export type ConsoleCtx = Context & { state: ConsoleState };
export type ConsoleRouter = Router<ConsoleState>;

const Uuid = z.uuid();

/**
 * What every family of console pages is built from (router.ts, endpoint-pages.ts, …): the page
 * frame, the session guard, the form parser and the API paths of this deployment's set.
 */
export function consoleKit(deps: ConsoleDeps) {
  const { config } = deps;
  const set = config.BEHAVIOUR_SET;
  const paths = NOTIFICATION_PATHS[set];
  const cookies = consoleCookies(config);
  const { clearSession, readSession, writeSession } = cookies;
  const { knex } = deps;
  /** The console's origin is PUBLIC_BASE_URL's: behind TLS termination the request itself may say http. */
  const publicOrigin = new URL(config.PUBLIC_BASE_URL!);

  function page(ctx: Context, status: number, title: string, section: Section, body: Html, scripts?: string[]): void {
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    const principal = (ctx.state as Partial<ConsoleState>).principal ?? null;
    const sandboxInProduction = config.PAYMENTS_SANDBOX_IN_PRODUCTION;
    ctx.body = layout({ title, section, principal, set, sandboxInProduction, body, scripts });
  }

  /**
   * Requires a console session: a valid access token in the httpOnly cookie, issued by a console
   * sign-in whose record is live now (not from this process's memory: a signed-out or revoked
   * cookie ends at once), else off to sign in. A token from the token exchange is no session.
   */
  async function session(ctx: Context, next: Next): Promise<void> {
    const token = readSession(ctx);
    let principal: Principal | null = null;
    if (token) principal = await deps.tokens.verify(token, { fresh: true }).catch(refusedAsNull);
    if (principal && !principal.consoleSession) principal = null;
    if (!token || !principal) {
      if (token) clearSession(ctx, 'session');
      if (isHtmx(ctx)) {
        ctx.set('HX-Redirect', '/console/sign-in');
        ctx.status = 204;
        return;
      }
      return ctx.redirect('/console/sign-in');
    }
    (ctx as ConsoleCtx).state.principal = principal;
    (ctx as ConsoleCtx).state.api = apiClient(ctx, await renewed(ctx, token, principal), deps.clientHeaders);
    await next();
  }

  /**
   * Keeps the session alive while the person works: past half its life, a request that is not a
   * page's own polling (X-Console-Poll) gets a fresh token for the same principal, carrying the
   * sign-in time, while the session's record is live: not signed out, not revoked, and not past
   * CONSOLE_SESSION_MAX_SECONDS after the sign-in (docs/decisions/0271-console-sessions-server-side.md).
   */
  async function renewed(ctx: Context, token: string, principal: Principal): Promise<string> {
    if (ctx.get('x-console-poll') === '1') return token;
    const { exp } = decodeJwt(token);
    const ttl = deps.tokens.ttlSeconds;
    if (exp === undefined || exp - Date.now() / 1000 > ttl / 2) return token;
    const record = await consoleSessions.renew(knex(), principal.consoleSession!, principal);
    if (!record) return token;
    const fresh = await deps.tokens.sign(principal, { authTime: Math.floor(record.created_at.getTime() / 1000) });
    writeSession(ctx, fresh, ttl);
    return fresh;
  }

  return {
    config,
    set,
    /** The JSON API's webhook paths in this set (spec §4.3). */
    api: { endpoints: `/notifications${paths.endpoints}`, deliveries: `/notifications${paths.deliveries}` },
    links: temporalLinks(config),
    page,
    session,
    cookies,
    secrets: deps.secrets,
    publicOrigin,
    sameOrigin: sameOriginAs(publicOrigin.origin),
    form: bodyParser({ enableTypes: ['form'], formLimit: '32kb', encoding: 'utf-8' }),
  };
}
export type ConsoleKit = ReturnType<typeof consoleKit>;

/** An htmx fragment: htmx swaps 2xx answers only, so a refusal is shown inside the fragment. */
export function fragment(ctx: Context, body: Html): void {
  ctx.status = 200;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body.text;
}

export const isHtmx = (ctx: Context) => ctx.get('hx-request') === 'true';

/** A token refused (401: invalid, expired, its session ended) is no session; an outage is the page's error, not a sign-out. */
function refusedAsNull(err: unknown): null {
  if (err instanceof AppError && err.status === 401) return null;
  throw err;
}

export function uuid(value: string | undefined): string {
  if (!Uuid.safeParse(value).success) throw new AppError(404, 'NOT_FOUND', 'Not found');
  return value!;
}

/** A read the page cannot do without: its refusal becomes the error page. */
export function need<T>(answer: ApiAnswer<T>, what: string): T {
  if (!answer.ok)
    throw new AppError(
      answer.status,
      answer.error?.code ?? 'UPSTREAM_FAILED',
      answer.error?.message ?? `Could not read ${what}`,
    );
  return answer.data;
}

/** A form field as trimmed text ('' when absent). */
export function field(body: unknown, name: string): string {
  const v = (body as Record<string, unknown>)[name];
  return typeof v === 'string' ? v.trim() : '';
}

const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/;

/** A datetime-local value read as UTC (the forms' labels say so), as ISO 8601; anything else is undefined. */
export function utcOf(local: string): string | undefined {
  if (!LOCAL_TIME.test(local)) return undefined;
  return `${local.length === 16 ? `${local}:00` : local}Z`;
}

/** A repeated form field (checkboxes) as a list. */
export function fields(body: unknown, name: string): string[] {
  const v = (body as Record<string, unknown>)[name];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return typeof v === 'string' ? [v] : [];
}

/**
 * Console writes ride a cookie, so a form on another site must not be able to send one: the
 * browser's Origin (or, without it, Sec-Fetch-Site) must say the request came from the console's
 * origin, which is PUBLIC_BASE_URL's (docs/decisions/0197-console-origin-behind-tls.md).
 */
function sameOriginAs(consoleOrigin: string) {
  return async function sameOrigin(ctx: Context, next: Next): Promise<void> {
    const origin = ctx.get('origin');
    const site = ctx.get('sec-fetch-site');
    const same = origin ? origin === consoleOrigin : site === 'same-origin';
    if (!same) throw new AppError(403, 'CROSS_SITE_REQUEST', 'This form must be sent from the console itself');
    await next();
  };
}
