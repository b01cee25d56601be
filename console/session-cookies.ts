import type { Context } from 'koa';
import { z } from 'zod';
import type { Config } from '../lib/runtime/config';
import type { PendingSignIn } from './sign-in';

const SESSION = 'tranche_console';
const PENDING = 'tranche_console_signin';
const PENDING_MAX_AGE_MS = 10 * 60_000;

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
  const options = (path: string, maxAge?: number) => ({
    httpOnly: true,
    sameSite: 'lax' as const,
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

    clearSession(ctx: Context, which: 'session' | 'pending'): void {
      jar(ctx).set(
        which === 'session' ? SESSION : PENDING,
        null,
        options(which === 'session' ? '/console' : '/console/auth'),
      );
    },
  };
}
