import type { Middleware } from 'koa';
import { badRequest } from '../../lib/errors';

/** Left on the middleware keyRequired() returns, so api/openapi documents the header as required there. */
export const KEY_REQUIRED = Symbol('tranche.idempotency.keyRequired');

/**
 * Placed after auth() on Tranche's own routes that move money (a refund, a reconciliation, a collection
 * retried): without an Idempotency-Key a retry or a double submit would move it again, so the command is
 * refused before anything is read (docs/decisions/0373-idempotency-key-required-where-money-moves.md).
 * After auth(), so a caller who may not make the request learns nothing from the header's absence. The
 * key itself is claimed by api/middleware/idempotency.ts, as on every POST.
 */
export function keyRequired(): Middleware {
  const middleware: Middleware = async (ctx, next) => {
    if (!ctx.get('idempotency-key')) {
      throw badRequest(
        'IDEMPOTENCY_KEY_REQUIRED',
        'This command moves money and is taken only under an Idempotency-Key header: send a unique key (1-255 printable ASCII characters), and the same key again when you retry',
        { header: 'Idempotency-Key' },
      );
    }
    await next();
  };
  return Object.assign(middleware, { [KEY_REQUIRED]: true });
}
