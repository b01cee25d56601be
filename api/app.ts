import Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import type Router from '@koa/router';
import type { ApiDeps } from './deps';
import { errorEnvelope, outageGate } from './middleware/errors';
import { dependencyWatchOf } from './health/dependencies';
import { httpMetrics } from './middleware/metrics';
import { writeRateLimit } from './middleware/write-rate-limit';
import { requestContext } from './middleware/request-context';
import { clientAddress } from './middleware/client-address';
import { idempotency } from './middleware/idempotency';
import { bodyDepthLimit } from './middleware/body-depth';
import { secretBoxFrom } from '../webhooks';
import { healthRouter } from './health/router';
import { identityRouter } from './identity/router';
import { tokenLiveness } from './identity/token-liveness';
import { offeringsRouter } from './issuance/offerings-router';
import { subscriptionsRouter } from './issuance/subscriptions-router';
import { notificationsRouter } from './notifications/router';
import { paymentsRouter } from './payments/router';
import { openApiRouter } from './openapi/router';
import { reviewRouter } from './issuance/review-routes';
import { endpointHealthRouter } from './notifications/health-routes';
import { consoleRouter } from './console/router';
import { devIdpAuthorizeRouter } from './identity/dev-idp-authorize';
import { auditRouter } from './audit/router';
import { codecRouter } from './codec/router';
import { openPersonalData } from './personal/open-personal';

const DESCRIPTION =
  'Investor subscriptions and signed webhooks. Success answers are `{ success: true, data }`, errors `{ success: false, error: { code, message, details } }`. Every authenticated POST takes an `Idempotency-Key`; a 503 `COMMAND_OUTCOME_UNKNOWN` means retry with the same key. Event payloads are under Webhooks.';

/** Every router of the service; a feature adds its own here. */
const routers: ((deps: ApiDeps) => Router)[] = [
  healthRouter,
  offeringsRouter,
  subscriptionsRouter,
  notificationsRouter,
  paymentsRouter,
  identityRouter,
  reviewRouter,
  endpointHealthRouter,
  auditRouter,
];

export function createApp(deps: ApiDeps): Koa {
  const { config } = deps;
  // Off by default: trusting the header unasked lets a client pick its own address
  // (docs/decisions/0126-client-addresses.md).
  const app = new Koa({ proxy: config.TRUST_PROXY, maxIpsCount: config.TRUST_PROXY_HOPS });
  const dependencies = dependencyWatchOf(deps);
  // A token stops when its API key is revoked or its console session ends (decision 0272).
  deps.tokens.checkLiveness(
    tokenLiveness(() => deps.orm.em.getConnection().getKnex(), config.TOKEN_REVOCATION_CACHE_SECONDS),
  );
  app.use(httpMetrics());
  app.use(errorEnvelope(dependencies));
  app.use(outageGate(dependencies));
  app.use(requestContext(deps.orm));
  // Before anything reads ctx.ip: the write limit, the exchange's limit, audit entries (decision 0273).
  app.use(clientAddress(config));
  app.use(writeRateLimit(deps));
  // Browser forms (the console, the dev IdP's sign-in) parse their own bodies; the API takes JSON only.
  for (const router of [consoleRouter(deps), devIdpAuthorizeRouter(config)])
    app.use(router.routes()).use(router.allowedMethods());
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: `${config.BODY_LIMIT_KB}kb`, encoding: 'utf-8' }));
  app.use(bodyDepthLimit());
  // Outside the Idempotency-Key store: kept answers stay sealed (docs/decisions/0313-erasure-by-crypto-shredding.md).
  app.use(openPersonalData(deps));
  app.use(
    idempotency({
      orm: deps.orm,
      box: secretBoxFrom(config),
      ttlSeconds: config.IDEMPOTENCY_KEY_TTL_SECONDS ?? config.IDEMPOTENCY_KEY_TTL_HOURS * 3600,
      commandTimeoutMs: config.COMMAND_TIMEOUT_MS,
    }),
  );
  const built = routers.map((build) => build(deps));
  // The document describes the routers above, so it is built from them and is not itself in it.
  for (const router of [
    ...built,
    openApiRouter(built, { title: 'Tranche API', version: '0.1.0', description: DESCRIPTION }, config.BEHAVIOUR_SET),
    // Temporal's remote codec protocol for the Web UI and CLI, not the JSON API: outside the document
    // like the console it sits under (docs/decisions/0307-codec-server-for-operators.md).
    codecRouter(deps),
  ]) {
    app.use(router.routes()).use(router.allowedMethods({ throw: true }));
  }
  return app;
}
