import Router from '@koa/router';
import type { ApiDeps } from '../deps';

/** GET /health: the process is alive. GET /ready: PostgreSQL and Temporal answer. */
export function healthRouter(deps: ApiDeps): Router {
  const router = new Router();
  router.get('/health', (ctx) => {
    ctx.body = { success: true, data: { status: 'ok' } };
  });
  router.get('/ready', async (ctx) => {
    const [database, temporal] = await Promise.all([
      check(() => deps.orm.em.getConnection().execute('select 1')),
      check(() => deps.temporal.connection.workflowService.getSystemInfo({})),
    ]);
    const ready = database && temporal;
    ctx.status = ready ? 200 : 503;
    ctx.body = ready
      ? { success: true, data: { database: 'ok', temporal: 'ok' } }
      : { success: false, error: { code: 'NOT_READY', message: 'A dependency is unreachable', details: { database: database ? 'ok' : 'down', temporal: temporal ? 'ok' : 'down' } } };
  });
  return router;
}

async function check(probe: () => Promise<unknown>): Promise<boolean> {
  try {
    await Promise.race([probe(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 3000).unref())]);
    return true;
  } catch {
    return false;
  }
}
