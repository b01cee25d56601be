import type { Context } from 'koa';
import { z } from 'zod';
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
 */
const options = (ctx: Context, path: string, maxAge: number) => ({
  httpOnly: true,
  sameSite: 'lax' as const,
  secure: ctx.secure,
  path,
  maxAge,
  overwrite: true,
});

export function writeSession(ctx: Context, accessToken: string, expiresInSeconds: number): void {
  ctx.cookies.set(SESSION, accessToken, options(ctx, '/console', expiresInSeconds * 1000));
}

export function readSession(ctx: Context): string | null {
  return ctx.cookies.get(SESSION) ?? null;
}

export function writePending(ctx: Context, pending: PendingSignIn): void {
  ctx.cookies.set(
    PENDING,
    Buffer.from(JSON.stringify(pending)).toString('base64url'),
    options(ctx, '/console/auth', PENDING_MAX_AGE_MS),
  );
}

export function readPending(ctx: Context): PendingSignIn | null {
  const raw = ctx.cookies.get(PENDING);
  if (!raw) return null;
  try {
    return Pending.parse(JSON.parse(Buffer.from(raw, 'base64url').toString()));
  } catch {
    return null;
  }
}

export function clearSession(ctx: Context, which: 'session' | 'pending'): void {
  ctx.cookies.set(which === 'session' ? SESSION : PENDING, null, {
    path: which === 'session' ? '/console' : '/console/auth',
  });
}
