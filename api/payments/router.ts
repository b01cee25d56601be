import Router from '@koa/router';
import { createSandboxProcessor } from '../../payments';
import type { ApiDeps } from '../deps';
import { paymentNotificationsRouter } from './notifications-router';
import { sandboxOperatorRouter } from './sandbox-operator-router';
import { sandboxPagesRouter } from './sandbox-pages-router';

/** Payments over HTTP: processor notifications, and with the sandbox its pages and operator console. */
export function paymentsRouter(deps: ApiDeps): Router {
  const router = new Router();
  const mount = (r: Router) => router.use(r.routes(), r.allowedMethods({ throw: true }));
  mount(paymentNotificationsRouter(deps));
  if (deps.config.PAYMENT_PROCESSOR === 'sandbox') {
    // The API's own handle on the sandbox: pages and the console write its records and notify.
    const sandbox = createSandboxProcessor(deps.config, deps.orm);
    mount(sandboxPagesRouter(deps.orm, sandbox.ledger));
    mount(sandboxOperatorRouter(deps, sandbox));
  }
  return router;
}
