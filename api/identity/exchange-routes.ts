import type Router from '@koa/router';
import type { ApiDeps } from '../deps';
import { validate } from '../middleware/validate';
import { parseApiKey, type tokenExchange } from '../../identity';
import { ok } from '../respond';
import { ExchangeBody, TokenResponse } from './schema';

/** spec §4.2 token exchange, and the JWKS other services verify our access tokens with. */
export function exchangeRoutes(router: Router, deps: ApiDeps, exchange: ReturnType<typeof tokenExchange>): void {
  router.post(
    '/identity/auth/exchange',
    async (ctx, next) => {
      const apiKey = ctx.get('x-api-key') || undefined;
      await exchange.throttle(ctx.ip, apiKey);
      // Key problems are answered before body problems: without a key nothing else matters.
      parseApiKey(apiKey);
      await next();
    },
    validate(
      {
        body: ExchangeBody,
        response: TokenResponse,
        summary: 'Exchange an identity provider ID token for an access token (spec §4.2)',
      },
      async (ctx, input) => {
        ok(ctx, await exchange.exchange(ctx.get('x-api-key'), input.body.token));
        ctx.set('Cache-Control', 'no-store');
      },
    ),
  );

  router.get(
    '/identity/.well-known/jwks.json',
    validate({ summary: 'The public keys access tokens are signed with (JWKS)' }, (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = deps.tokens.jwks();
    }),
  );
}
