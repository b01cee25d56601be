import { z } from 'zod';
import { blankAsUnset, bool, parseJson } from '../config-parsers';

/**
 * Who may call: access tokens, identity providers, the console's sign-in and the token exchange's limits.
 * Part of ConfigSchema (lib/runtime/config-schema.ts).
 */
export const identitySettings = {
  /** PKCS#8 PEM of the ES256 key that signs access tokens. Unset: a fresh key per process (dev/test only). */
  ACCESS_TOKEN_PRIVATE_KEY: z.string().includes('PRIVATE KEY').optional(),
  /**
   * The other keys of an access-token key rotation, published in the JWKS and accepted: PEM blocks
   * (public or private; only the public half is used) of the next key before it signs, and of the
   * previous key until its last tokens expire (docs/decisions/0137-access-token-key-rotation.md).
   */
  // Empty counts as unset: compose passes `${ACCESS_TOKEN_PUBLISHED_KEYS:-}` when there is no rotation.
  ACCESS_TOKEN_PUBLISHED_KEYS: blankAsUnset(z.string().includes('-----BEGIN').optional()),
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),

  /**
   * Identity providers whose ID tokens the exchange accepts: a JSON list of
   * {"issuer","jwks_uri","audience","org_ids"?}; org_ids pins an issuer to those organisations.
   */
  OIDC_ISSUERS: z
    .string()
    .default('[]')
    .transform(parseJson)
    .pipe(
      z.array(
        z.object({
          issuer: z.url(),
          jwks_uri: z.url({ protocol: /^https?$/ }),
          audience: z.string().min(1),
          org_ids: z.array(z.uuid()).min(1).optional(),
        }),
      ),
    ),
  /** Bounds on fetching an issuer's JWKS: request timeout, cache lifetime, minimum gap between refetches. */
  OIDC_JWKS_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(5000),
  OIDC_JWKS_CACHE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(600),
  OIDC_JWKS_COOLDOWN_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  /**
   * The embedded development identity provider under /dev-idp, which mints tokens for anyone. Off
   * unless turned on (`npm start` turns it on for its embedded stack); refused in production.
   */
  DEV_IDP_ENABLED: bool.default(false),
  /** Operator console (/console/): the Temporal Web UI its workflow links point at. */
  TEMPORAL_UI_URL: z.url({ protocol: /^https?$/ }).default('http://localhost:8233'),
  /**
   * The identity provider staff sign in to the console with (OIDC authorization code + PKCE). Unset:
   * the development identity provider when it is on, else the console's sign-in is closed. Must be
   * one of OIDC_ISSUERS, pinned with org_ids (docs/decisions/0101-console-sign-in.md).
   */
  CONSOLE_OIDC_ISSUER: z.url().optional(),
  /** The console's client id and (for a confidential client) secret at that provider. */
  CONSOLE_OIDC_CLIENT_ID: z.string().min(1).optional(),
  CONSOLE_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /**
   * A console session is renewed while its person works, but never past this long after
   * the sign-in: then the identity provider is asked again (and roles it removed take effect).
   */
  CONSOLE_SESSION_MAX_SECONDS: z.coerce.number().int().min(60).max(604_800).default(43_200),
  /**
   * How long an API process trusts its last look at whether a token's API key or console session
   * still stands: a revocation reaches every instance within this long (the console's own pages
   * look every time). 0 looks on every request (docs/decisions/0272-revocation-at-verify.md).
   */
  TOKEN_REVOCATION_CACHE_SECONDS: z.coerce.number().int().min(0).max(300).default(30),
  /**
   * Token exchanges allowed per window, counted per presented API key (a backend exchanging for its
   * users: 1,200 a minute, 20 a second sustained) and per client address (failed attempts included).
   */
  EXCHANGE_RATE_LIMIT_PER_KEY: z.coerce.number().int().min(1).default(1200),
  EXCHANGE_RATE_LIMIT_PER_ADDRESS: z.coerce.number().int().min(1).default(1200),
  EXCHANGE_RATE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  /** HMAC-SHA256 secret the KYC/accreditation provider signs its notifications with. Unset: notifications are refused. */
  IDENTITY_PROVIDER_WEBHOOK_SECRET: z.string().min(32).optional(),
};
