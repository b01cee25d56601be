import type { Middleware } from 'koa';
import { forbidden, unauthenticated } from '../../lib/errors';
import type { Principal, Role } from '../../domain/principal';
import type { AccessTokens } from '../../identity';
import { runUnderIdempotencyKey } from './idempotency';
import { timed } from '../../lib/runtime/request-timing';

export interface AuthState {
  principal: Principal;
}

/** Left on the middleware auth() returns (the roles it accepts), so api/openapi can document security and 401/403. */
export const AUTH_ROLES = Symbol('tranche.authRoles');

/**
 * Requires a valid bearer access token (spec §5.1) and, when given, one of the roles; then runs the
 * request under its Idempotency-Key, if it has one (api/middleware/idempotency.ts).
 */
export function auth(tokens: AccessTokens, ...anyOf: Role[]): Middleware {
  const middleware: Middleware = async (ctx, next) => {
    const header = ctx.get('authorization');
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw unauthenticated(header ? 'Use Authorization: Bearer <access token>' : undefined);
    const principal = await timed('auth', () => tokens.verify(match[1]!));
    if (anyOf.length && !anyOf.some((r) => principal.roles.includes(r))) {
      throw forbidden(`This operation needs the role ${anyOf.join(' or ')}`, 'ROLE_REQUIRED');
    }
    (ctx.state as AuthState).principal = principal;
    // Only now, with the caller allowed to make this request, may a kept answer be replayed.
    await timed('idempotency', () => runUnderIdempotencyKey(ctx, principal, () => timed('route', next)));
  };
  return Object.assign(middleware, { [AUTH_ROLES]: anyOf });
}
