import type { Context } from 'koa';
import { z } from 'zod';
import type { Config } from '../lib/runtime/config';
import type { PendingSignIn } from './sign-in';

const SESSION = 'tranche_console';
const PENDING = 'tranche_console_signin';
const PENDING_MAX_AGE_MS = 10 * 60_000;
const SECRET = 'tranche_console_secret';
/**
 * How long a new signing secret may wait, sealed, for the page it is shown on once: the hop of one
 * redirect, with room for a slow network (console/secret-flash.ts).
 */
export const SECRET_FLASH_MS = 2 * 60_000;

const Pending = z.object({ state: z.string().min(1), nonce: z.string().min(1), verifier: z.string().min(1) });

/**
 * The console session is the staff member's access token in an httpOnly cookie: script in the page
 * cannot read it, SameSite=Lax keeps other sites' forms from sending it (and sameOrigin() checks
 * anyway), and it lives exactly as long as the token. Lax rather than Strict so the first page after
 * coming back from an external identity provider still carries it.
 *
 * Secure follows PUBLIC_BASE_URL, not the request: behind TLS termination the hop that reaches the
 * API is plain HTTP (and a gateway that trusts no proxy says so in X-Forwarded-Proto), yet the
 * browser speaks HTTPS, and the token is a bearer token for the whole API.
 */
export function consoleCookies(config: Pick<Config, 'PUBLIC_BASE_URL'>) {
  const secure = new URL(config.PUBLIC_BASE_URL!).protocol === 'https:';
  const options = (path: string, maxAge?: number, sameSite: 'lax' | 'strict' = 'lax') => ({
    httpOnly: true,
    sameSite,
    secure,
    path,
    maxAge,
    overwrite: true,
  });
  /** The cookies library refuses a Secure cookie on a request it thinks is plain; this one's public face is HTTPS. */
  const jar = (ctx: Context) => {
    if (secure) ctx.cookies.secure = true;
    return ctx.cookies;
  };

  return {
    writeSession(ctx: Context, accessToken: string, expiresInSeconds: number): void {
      jar(ctx).set(SESSION, accessToken, options('/console', expiresInSeconds * 1000));
    },

    readSession(ctx: Context): string | null {
      return ctx.cookies.get(SESSION) ?? null;
    },

    writePending(ctx: Context, pending: PendingSignIn): void {
      jar(ctx).set(
        PENDING,
        Buffer.from(JSON.stringify(pending)).toString('base64url'),
        options('/console/auth', PENDING_MAX_AGE_MS),
      );
    },

    readPending(ctx: Context): PendingSignIn | null {
      const raw = ctx.cookies.get(PENDING);
      if (!raw) return null;
      try {
        return Pending.parse(JSON.parse(Buffer.from(raw, 'base64url').toString()));
      } catch {
        return null;
      }
    },

    /**
     * A new signing secret, already sealed (console/secret-flash.ts), between the POST that made it and
     * the page that shows it once (docs/decisions/0375-console-forms-carry-their-key.md): sent only to
     * that page's path, same-site only, for two minutes at most.
     */
    writeSecret(ctx: Context, endpointId: string, sealed: string): void {
      jar(ctx).set(SECRET, sealed, options(secretPath(endpointId), SECRET_FLASH_MS, 'strict'));
    },

    readSecret(ctx: Context): string | null {
      return ctx.cookies.get(SECRET) ?? null;
    },

    /** Once shown, or once the person has gone on to the endpoint, the secret is not kept any longer. */
    clearSecret(ctx: Context, endpointId: string): void {
      jar(ctx).set(SECRET, null, options(secretPath(endpointId), undefined, 'strict'));
    },

    clearSession(ctx: Context, which: 'session' | 'pending'): void {
      jar(ctx).set(
        which === 'session' ? SESSION : PENDING,
        null,
        options(which === 'session' ? '/console' : '/console/auth'),
      );
    },
  };
}

/** The one page a new signing secret is shown on (console/endpoint-pages.ts). */
export const secretPath = (endpointId: string) => `/console/webhooks/${endpointId}/secret`;
