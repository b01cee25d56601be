import Router from '@koa/router';
import { z } from 'zod';
import { AppError, dependencyName, OUTAGE_RETRY_AFTER_SECONDS } from '../../lib/errors';
import type { ApiDeps } from '../deps';
import { validate } from '../middleware/validate';
import { ok } from '../respond';
import { dependencyWatchOf } from '../dependency-watch';
import { WARM_PARTS } from '../warmth';

const Alive = z.object({ status: z.literal('ok') });
const Ready = z.object({
  database: z.literal('ok'),
  temporal: z.literal('ok'),
  warmed: z
    .array(z.enum(WARM_PARTS))
    .describe('The start-up warm-up parts that have run (all of them: /ready waits for the last, a warm worker)'),
  /** Present only when production runs the payment sandbox knowingly (PAYMENTS_SANDBOX_IN_PRODUCTION): no money moves. */
  payments_sandbox_in_production: z.literal(true).optional(),
});

/**
 * GET /health: the process is alive. GET /ready: PostgreSQL and Temporal answer, and the start-up
 * warm-up has run (docs/decisions/0302-warm-before-ready.md).
 */
export function healthRouter(deps: ApiDeps): Router {
  const router = new Router();
  const dependencies = dependencyWatchOf(deps);
  router.get(
    '/health',
    validate({ response: Alive, summary: 'Liveness: the process answers' }, (ctx) => ok(ctx, { status: 'ok' })),
  );
  router.get(
    '/ready',
    validate(
      {
        response: Ready,
        summary:
          'Readiness: PostgreSQL and Temporal answer and the start-up warm-up has run, a worker warm too (503 NOT_READY otherwise)',
      },
      async (ctx) => {
        const reachable = await dependencies.check();
        const { warmth } = deps;
        if (reachable.database && reachable.temporal && warmth && !warmth.done)
          throw new AppError(503, 'NOT_READY', `Warming up: ${warmth.pending.join(', ')} still to run`, {
            database: 'ok',
            temporal: 'ok',
            warmed: warmth.warmed,
            warming: warmth.pending,
            retry_after_seconds: 1,
          });
        if (reachable.database && reachable.temporal)
          return ok(ctx, {
            database: 'ok',
            temporal: 'ok',
            warmed: warmth ? warmth.warmed : [],
            ...(deps.config.PAYMENTS_SANDBOX_IN_PRODUCTION ? { payments_sandbox_in_production: true } : {}),
          });
        const down = (['database', 'temporal'] as const).filter((d) => !reachable[d]);
        throw new AppError(503, 'NOT_READY', `${down.map(dependencyName).join(' and ')} cannot be reached`, {
          database: reachable.database ? 'ok' : 'down',
          temporal: reachable.temporal ? 'ok' : 'down',
          retry_after_seconds: OUTAGE_RETRY_AFTER_SECONDS,
        });
      },
    ),
  );
  return router;
}
