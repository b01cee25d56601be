import Router from '@koa/router';
import { RateLimiter } from '../../db/rate-limits';
import type { ApiDeps } from '../deps';
import {
  accreditationFlow,
  accreditations,
  configuredIssuers,
  devIdpOf,
  IdTokenVerifier,
  kycModel,
  tokenExchange,
} from '../../identity';
import { accreditationRoutes } from './accreditation-routes';
import { apiKeyRoutes } from './api-key-routes';
import { consoleSessionRoutes } from './console-session-routes';
import { devIdpRoutes } from './dev-idp-routes';
import { erasureRoutes } from './erasure-routes';
import { exchangeRoutes } from './exchange-routes';
import { kycRoutes } from './kyc-routes';
import { providerRoutes } from './provider-routes';

/** Everything under /identity (spec §4.2, §5, identity side of §6), and /dev-idp when enabled. */
export function identityRouter(deps: ApiDeps): Router {
  const router = new Router();
  const { config } = deps;
  const devIdp = devIdpOf(config);
  const verifier = new IdTokenVerifier([...configuredIssuers(config), ...(devIdp ? [devIdp.trustedIssuer()] : [])]);
  const window = config.EXCHANGE_RATE_WINDOW_SECONDS;
  const limits = {
    perKey: new RateLimiter(deps.orm, {
      name: 'exchange-key',
      limit: config.EXCHANGE_RATE_LIMIT_PER_KEY,
      windowSeconds: window,
    }),
    perAddress: new RateLimiter(deps.orm, {
      name: 'exchange-address',
      limit: config.EXCHANGE_RATE_LIMIT_PER_ADDRESS,
      windowSeconds: window,
    }),
  };
  const kyc = kycModel(config.BEHAVIOUR_SET);
  const accreditation = accreditations(accreditationFlow(config.BEHAVIOUR_SET));

  exchangeRoutes(router, deps, tokenExchange({ orm: deps.orm, tokens: deps.tokens, verifier, limits, kyc: deps.kyc }));
  apiKeyRoutes(router, deps);
  consoleSessionRoutes(router, deps);
  kycRoutes(router, deps, kyc);
  accreditationRoutes(router, deps, accreditation);
  providerRoutes(router, deps, { kyc, accreditation });
  erasureRoutes(router, deps);
  if (devIdp) devIdpRoutes(router, deps, devIdp);
  return router;
}
