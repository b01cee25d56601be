import type { Middleware } from 'koa';
import { RateLimiter } from '../../db/rate-limits';
import type { ApiDeps } from '../deps';
import type { AccessTokens } from '../../identity';
import { timed } from '../../lib/runtime/request-timing';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
// Signed by a processor or the identity provider on behalf of every investor at once.
const NOTIFICATIONS = /^\/(payments\/[a-z]+|identity\/provider)\/notifications$/;

/**
 * Limits writes per client (docs/decisions/0094-write-limit.md): per access-token subject when the
 * request carries a token that verifies, else per client address. Only a verified subject is
 * trusted as a key, or a caller could dodge the limit by inventing one per request. Notifications
 * have a budget of their own per sending address. Runs before the body parser, so a client over
 * its limit costs no parsing.
 */
export function writeRateLimit(deps: Pick<ApiDeps, 'orm' | 'tokens' | 'config'>): Middleware {
  const { config } = deps;
  const writes = new RateLimiter(deps.orm, {
    name: 'write',
    limit: config.WRITE_RATE_LIMIT,
    windowSeconds: config.WRITE_RATE_WINDOW_SECONDS,
  });
  const notifications = new RateLimiter(deps.orm, {
    name: 'notify',
    limit: config.NOTIFICATION_RATE_LIMIT,
    windowSeconds: 60,
  });
  return async (ctx, next) => {
    if (WRITES.has(ctx.method)) {
      if (NOTIFICATIONS.test(ctx.path)) await notifications.hit(`address:${ctx.ip}`);
      else
        await timed('rate_limit', async () =>
          writes.hit(await clientKey(deps.tokens, ctx.get('authorization'), ctx.ip)),
        );
    }
    await next();
  };
}

async function clientKey(tokens: AccessTokens, authorization: string, ip: string): Promise<string> {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization);
  if (match) {
    const principal = await tokens.verify(match[1]!).catch(() => undefined);
    if (principal) return `subject:${principal.orgId}:${principal.userId}`;
  }
  return `address:${ip}`;
}
