import Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import type Router from '@koa/router';
import type { AllowedMethodsOptions, RouterContext } from '@koa/router';
import type { ApiDeps } from '../api/deps';
import { errorEnvelope, outageGate, toResponseError } from '../api/middleware/error-envelope';
import { dependencyWatchOf } from '../api/dependency-watch';
import { httpMetrics } from '../api/middleware/http-metrics';
import { writeRateLimit } from '../api/middleware/write-rate-limit';
import { requestContext } from '../api/middleware/request-context';
import { clientAddress, consoleClientHeaders } from '../api/middleware/client-address';
import { idempotency } from '../api/middleware/idempotency';
import { bodyDepthLimit } from '../api/middleware/body-depth';
import { deliveryReads, secretBoxFrom } from '../webhooks';
import { healthRouter } from '../api/health/router';
import { identityRouter } from '../api/identity/router';
import { tokenLiveness } from '../identity';
import { offeringsRouter } from '../api/issuance/offerings-router';
import { subscriptionsRouter } from '../api/issuance/subscriptions-router';
import { notificationsRouter } from '../api/notifications/router';
import { paymentsRouter } from '../api/payments/router';
import { openApiRouter } from '../api/openapi/router';
import { reviewRouter } from '../api/issuance/review-routes';
import { endpointHealthRouter } from '../api/notifications/health-routes';
import { consoleCookies, consoleRouter } from '../console';
import { devIdpAuthorizeRouter } from '../api/identity/dev-idp-authorize';
import { auditRouter } from '../api/audit/router';
import { recordConsoleSession } from '../api/audit/audit-recorder';
import { codecRouter } from '../api/codec/router';
import { openPersonalData } from '../api/personal/open-personal';
import { countAttention } from '../db/subscription-attention';
import { countSubscriptionsNeedingAttention, measurePendingDeliveryAge } from '../lib/runtime/metrics';
import { requestTiming } from '../lib/runtime/request-timing';

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
  // The API's metrics read how many subscriptions need attention at each scrape (docs/decisions/0366).
  countSubscriptionsNeedingAttention(() => countAttention(deps.orm.em.getConnection().getKnex()));
  // And the age of the webhook backlog, for its alert (docs/decisions/0410-operator-alerts.md).
  const deliveries = deliveryReads(deps.orm);
  measurePendingDeliveryAge(() => deliveries.oldestPendingAgeSeconds());
  // The webhook secret keyring: stored answers and the console's one-time secrets are sealed under it.
  const box = secretBoxFrom(config);
  // A token stops when its API key is revoked or its console session ends (decision 0272).
  deps.tokens.checkLiveness(
    tokenLiveness(() => deps.orm.em.getConnection().getKnex(), config.TOKEN_REVOCATION_CACHE_SECONDS),
  );
  // Outermost, so its total holds every layer (API_REQUEST_TIMING, development only: lib/runtime/request-timing.ts).
  if (config.API_REQUEST_TIMING) app.use(requestTiming());
  app.use(httpMetrics());
  app.use(errorEnvelope(dependencies));
  app.use(outageGate(dependencies));
  app.use(requestContext());
  // Before anything reads ctx.ip: the write limit, the exchange's limit, audit entries (decision 0273).
  app.use(clientAddress(config));
  app.use(writeRateLimit(deps));
  // Browser forms (the console, the dev IdP's sign-in) parse their own bodies; the API takes JSON only.
  const consolePages = consoleRouter({
    ...deps,
    knex: () => deps.orm.em.getConnection().getKnex(),
    pageError: (raw) => toResponseError(raw, dependencies),
    recordSession: recordConsoleSession,
    clientHeaders: consoleClientHeaders,
    secrets: box,
  });
  for (const router of [consolePages, devIdpAuthorizeRouter(config)]) mount(app, router, {});
  app.use(bodyParser({ enableTypes: ['json'], jsonLimit: `${config.BODY_LIMIT_KB}kb`, encoding: 'utf-8' }));
  app.use(bodyDepthLimit());
  // Outside the Idempotency-Key store: kept answers stay sealed (docs/decisions/0313-erasure-by-crypto-shredding.md).
  app.use(openPersonalData(deps));
  app.use(
    idempotency({
      orm: deps.orm,
      box,
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
    codecRouter(deps, consoleCookies(config).readSession),
  ])
    mount(app, router, { throw: true });
  return app;
}

/**
 * A router's routes and its answer to a wrong method, entered only by paths under its prefix, as
 * its routes match (case-insensitively): every other request would walk each of its routes and
 * pass two middleware for nothing (docs/decisions/0343-less-garbage-per-delivery.md). A router with
 * no prefix sees every request.
 */
function mount(app: Koa, router: Router, allowed: AllowedMethodsOptions): void {
  const routes = router.routes();
  const methods = router.allowedMethods(allowed);
  const prefix = router.opts.prefix;
  if (!prefix) {
    app.use(routes).use(methods);
    return;
  }
  const under = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'i');
  app.use((ctx: RouterContext, next) => (under.test(ctx.path) ? routes(ctx, () => methods(ctx, next)) : next()));
}
