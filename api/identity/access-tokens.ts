import { calculateJwkThumbprint, exportJWK, generateKeyPair, importPKCS8, importSPKI, jwtVerify, SignJWT, type CryptoKey, type JWK } from 'jose';
import { createPublicKey } from 'node:crypto';
import { unauthenticated } from '../../lib/errors';
import { ROLES, type Principal, type Role } from '../../domain/principal';

const ALG = 'ES256';
export const ACCESS_TOKEN_ISSUER = 'tranche';
export const ACCESS_TOKEN_AUDIENCE = 'tranche-api';

/** Signs and verifies the service's own access tokens (asymmetric, so others verify with the JWKS). */
export class AccessTokens {
  private constructor(
    private readonly privateKey: CryptoKey,
    private readonly publicKey: CryptoKey,
    readonly publicJwk: JWK,
    readonly ttlSeconds: number,
  ) {}

  /** From a PKCS#8 PEM (production), or a fresh key pair (development and tests). */
  static async create(opts: { privateKeyPem?: string; ttlSeconds: number }): Promise<AccessTokens> {
    let privateKey: CryptoKey;
    let publicKey: CryptoKey;
    if (opts.privateKeyPem) {
      privateKey = await importPKCS8(opts.privateKeyPem, ALG, { extractable: true });
      const spki = createPublicKey(opts.privateKeyPem).export({ type: 'spki', format: 'pem' }).toString();
      publicKey = await importSPKI(spki, ALG, { extractable: true });
    } else {
      ({ privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true }));
    }
    const jwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(jwk);
    return new AccessTokens(privateKey, publicKey, { ...jwk, kid, alg: ALG, use: 'sig' }, opts.ttlSeconds);
  }

  async sign(p: Principal): Promise<string> {
    return new SignJWT({ org: p.orgId, roles: p.roles, kyc_completed: p.kycCompleted })
      .setProtectedHeader({ alg: ALG, kid: this.publicJwk.kid!, typ: 'at+jwt' })
      .setSubject(p.userId)
      .setIssuer(ACCESS_TOKEN_ISSUER)
      .setAudience(ACCESS_TOKEN_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.privateKey);
  }

  async verify(token: string): Promise<Principal> {
    try {
      const { payload } = await jwtVerify(token, this.publicKey, {
        algorithms: [ALG],
        issuer: ACCESS_TOKEN_ISSUER,
        audience: ACCESS_TOKEN_AUDIENCE,
        typ: 'at+jwt',
      });
      const roles = Array.isArray(payload.roles) ? payload.roles.filter((r): r is Role => ROLES.includes(r)) : [];
      if (typeof payload.sub !== 'string' || typeof payload.org !== 'string') throw new Error('claims missing');
      return { userId: payload.sub, orgId: payload.org, roles, kycCompleted: payload.kyc_completed === true };
    } catch (err) {
      const expired = (err as { code?: string }).code === 'ERR_JWT_EXPIRED';
      throw expired
        ? unauthenticated('The access token has expired', 'TOKEN_EXPIRED')
        : unauthenticated('The access token is not valid', 'INVALID_TOKEN');
    }
  }

  jwks(): { keys: JWK[] } {
    return { keys: [this.publicJwk] };
  }
}
