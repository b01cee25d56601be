import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { forbidden, unauthenticated, unavailable, type AppError } from '../lib/errors';
import type { Config } from '../lib/runtime/config';
import { logger } from '../lib/runtime/logger';
import { ROLES, type Role } from '../domain/principal';

/** An identity provider whose ID tokens the exchange trusts (config OIDC_ISSUERS, or the dev IdP). */
export interface TrustedIssuer {
  issuer: string;
  audience: string;
  /** When set, the issuer vouches only for users of these organisations. */
  orgIds?: string[];
  keys: JWTVerifyGetKey;
}

export interface VerifiedIdentity {
  issuer: string;
  userId: string;
  roles: Role[];
  /** The organisation the ID token names in `org_id`, when it names one. */
  orgId: string | null;
  /** Whether the issuer is pinned to organisations (org_ids): the console signs in only through such issuers. */
  orgPinned: boolean;
  /** The OIDC `nonce` claim, which a relying party that sent one must compare. */
  nonce: string | null;
}

// Asymmetric only: an HMAC-signed ID token would mean the IdP shares a secret with every client.
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const CLOCK_TOLERANCE_SECONDS = 30;

/** The configured issuers, each with a remote JWKS that jose caches and refetches on an unknown `kid`. */
export function configuredIssuers(config: Config): TrustedIssuer[] {
  return config.OIDC_ISSUERS.map((i) => ({
    issuer: i.issuer,
    audience: i.audience,
    orgIds: i.org_ids,
    keys: createRemoteJWKSet(new URL(i.jwks_uri), {
      timeoutDuration: config.OIDC_JWKS_TIMEOUT_MS,
      cacheMaxAge: config.OIDC_JWKS_CACHE_SECONDS * 1000,
      cooldownDuration: config.OIDC_JWKS_COOLDOWN_SECONDS * 1000,
    }),
  }));
}

/** Verifies OIDC ID tokens (signature against the issuer's JWKS, iss, aud, exp, nbf) and reads who they name. */
export class IdTokenVerifier {
  private readonly byIssuer: Map<string, TrustedIssuer>;

  constructor(issuers: TrustedIssuer[]) {
    this.byIssuer = new Map(issuers.map((i) => [i.issuer, i]));
  }

  async verify(token: string, keyOrgId: string): Promise<VerifiedIdentity> {
    const trusted = this.issuerOf(token);
    let payload;
    try {
      ({ payload } = await jwtVerify(token, trusted.keys, {
        issuer: trusted.issuer,
        audience: trusted.audience,
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'exp', 'iat'],
      }));
    } catch (err) {
      throw verificationFailure(err, trusted.issuer);
    }
    if (trusted.orgIds && !trusted.orgIds.includes(keyOrgId)) {
      throw forbidden(
        'This identity provider is not trusted for the organisation of the API key',
        'ISSUER_NOT_ALLOWED_FOR_ORG',
      );
    }
    const orgId = typeof payload.org_id === 'string' ? payload.org_id : null;
    if (orgId !== null && orgId !== keyOrgId) {
      throw forbidden('The ID token names another organisation than the API key', 'ID_TOKEN_ORG_MISMATCH');
    }
    const nonce = typeof payload.nonce === 'string' ? payload.nonce : null;
    return {
      issuer: trusted.issuer,
      userId: payload.sub!,
      roles: rolesFrom(payload.roles),
      orgId,
      orgPinned: Boolean(trusted.orgIds),
      nonce,
    };
  }

  /** Reads `iss` before verifying, only to pick whose keys to verify with. */
  private issuerOf(token: string): TrustedIssuer {
    let alg: unknown;
    let iss: unknown;
    try {
      alg = decodeProtectedHeader(token).alg;
      iss = decodeJwt(token).iss;
    } catch {
      throw unauthenticated('The ID token is not a JWT', 'ID_TOKEN_MALFORMED');
    }
    if (typeof alg !== 'string' || alg.toLowerCase() === 'none' || token.split('.')[2] === '') {
      throw unauthenticated('The ID token is not signed', 'ID_TOKEN_UNSIGNED');
    }
    const trusted = typeof iss === 'string' ? this.byIssuer.get(iss) : undefined;
    if (!trusted)
      throw unauthenticated(
        'The ID token was issued by an identity provider this service does not trust',
        'ID_TOKEN_ISSUER_UNTRUSTED',
      );
    return trusted;
  }
}

/**
 * Roles come from the ID token's `roles` claim, restricted to the service's roles; a token
 * without any of them is an investor (docs/decisions/0042-roles-from-id-token.md).
 */
function rolesFrom(claim: unknown): Role[] {
  const roles = Array.isArray(claim) ? ROLES.filter((r) => claim.includes(r)) : [];
  return roles.length ? roles : ['investor'];
}

function verificationFailure(err: unknown, issuer: string): AppError {
  const { code, claim } = err as { code?: string; claim?: string };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return unauthenticated('The ID token has expired', 'ID_TOKEN_EXPIRED');
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (claim === 'nbf') return unauthenticated('The ID token is not valid yet', 'ID_TOKEN_NOT_YET_VALID');
      if (claim === 'aud')
        return unauthenticated('The ID token was issued for another audience', 'ID_TOKEN_AUDIENCE_MISMATCH');
      return unauthenticated(
        `The ID token's ${claim ?? 'claims'} claim is missing or invalid`,
        'ID_TOKEN_CLAIMS_INVALID',
      );
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return unauthenticated(
        'The ID token is signed with an algorithm this service does not accept',
        'ID_TOKEN_ALGORITHM_NOT_ALLOWED',
      );
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return unauthenticated(
        "The ID token's signature does not match the identity provider's keys",
        'ID_TOKEN_SIGNATURE_INVALID',
      );
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
      return unauthenticated('The ID token is not a valid JWT', 'ID_TOKEN_MALFORMED');
    default:
      // Timeouts, unreachable or broken JWKS endpoints: the token may be fine, the provider is not.
      logger.warn({ issuer, code, reason: (err as Error).message }, 'identity provider JWKS unavailable');
      return unavailable("The identity provider's signing keys could not be fetched; try again");
  }
}
