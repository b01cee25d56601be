import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createLocalJWKSet, SignJWT, type JWK } from 'jose';
import { newId } from '../lib/ids';
import type { Role } from '../domain/principal';
import type { Config } from '../lib/runtime/config';
import type { TrustedIssuer } from './id-token-verifier';

export const DEV_IDP_AUDIENCE = 'tranche-dev';
const ALG = 'ES256';

/**
 * The development identity provider: a fresh key per process, its JWKS served under /dev-idp, and
 * ID tokens minted on request. Off in production (lib/runtime/config refuses DEV_IDP_ENABLED there).
 */
export class DevIdp {
  readonly issuer: string;
  private readonly privateKey: KeyObject;
  private readonly publicJwk: JWK;

  constructor(baseUrl: string) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.issuer = `${baseUrl}/dev-idp`;
    this.privateKey = privateKey;
    this.publicJwk = { ...(publicKey.export({ format: 'jwk' }) as JWK), kid: newId(), alg: ALG, use: 'sig' };
  }

  jwks(): { keys: JWK[] } {
    return { keys: [this.publicJwk] };
  }

  /** Its own tokens are checked against the in-process key set: no HTTP round trip to itself. */
  trustedIssuer(): TrustedIssuer {
    return { issuer: this.issuer, audience: DEV_IDP_AUDIENCE, keys: createLocalJWKSet(this.jwks()) };
  }

  async mintIdToken(input: {
    userId: string;
    orgId: string;
    roles: Role[];
    ttlSeconds: number;
    nonce?: string;
  }): Promise<string> {
    return new SignJWT({ org_id: input.orgId, roles: input.roles, ...(input.nonce ? { nonce: input.nonce } : {}) })
      .setProtectedHeader({ alg: ALG, kid: this.publicJwk.kid!, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setAudience(DEV_IDP_AUDIENCE)
      .setSubject(input.userId)
      .setIssuedAt()
      .setExpirationTime(`${input.ttlSeconds}s`)
      .sign(this.privateKey);
  }
}

const perConfig = new WeakMap<Config, DevIdp>();

/** The app's one development identity provider (null when off): the exchange and the console share its key. */
export function devIdpOf(config: Config): DevIdp | null {
  if (!config.DEV_IDP_ENABLED) return null;
  let idp = perConfig.get(config);
  if (!idp) {
    idp = new DevIdp(config.PUBLIC_BASE_URL!);
    perConfig.set(config, idp);
  }
  return idp;
}
