import Router from '@koa/router';
import { AppError } from '../../lib/errors';
import { z } from 'zod';
import type { ApiDeps } from '../deps';
import { validate } from '../middleware/validate';
import { ok } from '../respond';

const Alive = z.object({ status: z.literal('ok') });
const Ready = z.object({ database: z.literal('ok'), temporal: z.literal('ok') });

/** GET /health: the process is alive. GET /ready: PostgreSQL and Temporal answer. */
export function healthRouter(deps: ApiDeps): Router {
  const router = new Router();
  router.get(
    '/health',
    validate({ response: Alive, summary: 'Liveness: the process answers' }, (ctx) => ok(ctx, { status: 'ok' })),
  );
  router.get(
    '/ready',
    validate(
      { response: Ready, summary: 'Readiness: PostgreSQL and Temporal answer (503 NOT_READY otherwise)' },
      async (ctx) => {
        const [database, temporal] = await Promise.all([
          check(() => deps.orm.em.getConnection().execute('select 1')),
          check(() => deps.temporal.connection.workflowService.getSystemInfo({})),
        ]);
        if (database && temporal) return ok(ctx, { database: 'ok', temporal: 'ok' });
        throw new AppError(503, 'NOT_READY', 'A dependency is unreachable', {
          database: database ? 'ok' : 'down',
          temporal: temporal ? 'ok' : 'down',
        });
      },
    ),
  );
  return router;
}

async function check(probe: () => Promise<unknown>): Promise<boolean> {
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 3000).unref()),
    ]);
    return true;
  } catch {
    return false;
  }
}
