import type Router from '@koa/router';
import type { ApiDeps } from '../deps';
import { validate } from '../middleware/validate';
import { createApiKey, DEV_IDP_AUDIENCE, type DevIdp } from '../../identity';
import { ok } from '../respond';
import { DevMintBody, DevMintResponse } from './schema';

const ID_TOKEN_TTL_SECONDS = 600;

/**
 * The development identity provider's endpoints: discovery, JWKS, and a mint that hands out an ID
 * token (and an API key) for any user, organisation and role. Mounted only when DEV_IDP_ENABLED.
 */
export function devIdpRoutes(router: Router, deps: ApiDeps, idp: DevIdp): void {
  router.get(
    '/dev-idp/.well-known/openid-configuration',
    validate({ summary: "The development identity provider's OpenID discovery document" }, (ctx) => {
      ctx.body = {
        issuer: idp.issuer,
        jwks_uri: `${idp.issuer}/jwks.json`,
        authorization_endpoint: `${idp.issuer}/authorize`,
        token_endpoint: `${idp.issuer}/token`,
        code_challenge_methods_supported: ['S256'],
        id_token_signing_alg_values_supported: ['ES256'],
        subject_types_supported: ['public'],
        response_types_supported: ['code', 'id_token'],
        audience: DEV_IDP_AUDIENCE,
      };
    }),
  );

  router.get(
    '/dev-idp/jwks.json',
    validate({ summary: "The development identity provider's signing keys (JWKS)" }, (ctx) => {
      ctx.body = idp.jwks();
    }),
  );

  router.post(
    '/dev-idp/mint',
    validate(
      {
        body: DevMintBody,
        response: DevMintResponse,
        summary: 'Mint a development ID token (and optionally an API key); development only',
      },
      async (ctx, input) => {
        const b = input.body;
        const idToken = await idp.mintIdToken({
          userId: b.user_id,
          orgId: b.org_id,
          roles: b.roles,
          ttlSeconds: ID_TOKEN_TTL_SECONDS,
        });
        const apiKey = b.api_key
          ? (await createApiKey(deps.orm.em.fork(), { orgId: b.org_id, name: 'dev-idp mint', createdBy: 'dev-idp' }))
              .key
          : null;
        ctx.set('Cache-Control', 'no-store');
        ok(ctx, { id_token: idToken, api_key: apiKey, expires_in: ID_TOKEN_TTL_SECONDS });
      },
    ),
  );
}
