import type { Middleware } from 'koa';
import { RateLimiter } from '../../lib/rate-limit';
import type { AccessTokens } from '../identity/access-tokens';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Limits writes per client (docs/decisions.md, Operations): per access-token subject when the
 * request carries a token that verifies, else per client address. Only a verified subject is
 * trusted as a key, or a caller could dodge the limit by inventing one per request. Runs before
 * the body parser, so a client over its limit costs no parsing.
 */
export function writeRateLimit(tokens: AccessTokens, limit: number, windowSeconds: number): Middleware {
  const limiter = new RateLimiter(limit, windowSeconds * 1000);
  return async (ctx, next) => {
    if (WRITES.has(ctx.method)) limiter.hit(await clientKey(tokens, ctx.get('authorization'), ctx.ip));
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
