import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importPKCS8,
  importSPKI,
  jwtVerify,
  SignJWT,
  type CryptoKey,
  type JWK,
} from 'jose';
import { createPublicKey } from 'node:crypto';
import { unauthenticated } from '../lib/errors';
import { ROLES, type Principal, type Role } from '../domain/principal';
import type { TokenLiveness } from './token-liveness';
import { timed } from '../lib/runtime/request-timing';

const ALG = 'ES256';
const ACCESS_TOKEN_ISSUER = 'tranche';
const ACCESS_TOKEN_AUDIENCE = 'tranche-api';

/**
 * Signs and verifies the service's own access tokens (asymmetric, so others verify with the JWKS).
 * One key signs; the JWKS also publishes the other keys of a rotation (the previous key, whose
 * tokens stay valid until they expire, or the next key, published before it signs so verifiers
 * already hold it), and tokens under any published key verify, chosen by `kid`.
 */
export class AccessTokens {
  private readonly keySet: ReturnType<typeof createLocalJWKSet>;
  /**
   * Tokens this instance already verified, until they expire: a client sends the same token with
   * every request, and an ECDSA verification per request (twice: the write limit and auth) was
   * the API's largest CPU cost. The keys never change in an instance, so neither does a verdict.
   */
  private readonly verified = new Map<string, { principal: Principal; expiresAt: number }>();
  /** What stands behind a token (its API key, its console session), checked after the signature. */
  private liveness: TokenLiveness | undefined;

  private constructor(
    private readonly privateKey: CryptoKey,
    readonly publicJwk: JWK,
    private readonly publishedJwks: JWK[],
    readonly ttlSeconds: number,
  ) {
    this.keySet = createLocalJWKSet(this.jwks());
  }

  /**
   * From a PKCS#8 PEM (production), or a fresh key pair (development and tests). `publishedKeysPem`
   * holds the rotation's other keys, PEM blocks one after another (public SPKI or private PKCS#8;
   * only the public half is used). Without a PEM, a spare fresh key is published beside the
   * signing one, so the JWKS always has the two-key shape consumers must handle.
   */
  static async create(opts: {
    privateKeyPem?: string;
    publishedKeysPem?: string;
    ttlSeconds: number;
  }): Promise<AccessTokens> {
    let privateKey: CryptoKey;
    let publicKey: CryptoKey;
    if (opts.privateKeyPem) {
      privateKey = await importPKCS8(opts.privateKeyPem, ALG, { extractable: true });
      publicKey = await publicOf(opts.privateKeyPem);
    } else {
      ({ privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true }));
    }
    const published = opts.publishedKeysPem
      ? await Promise.all(pemBlocks(opts.publishedKeysPem).map(publicOf))
      : opts.privateKeyPem
        ? []
        : [(await generateKeyPair(ALG, { extractable: true })).publicKey];
    const current = await toJwk(publicKey);
    const others = (await Promise.all(published.map(toJwk))).filter((k) => k.kid !== current.kid);
    return new AccessTokens(privateKey, current, others, opts.ttlSeconds);
  }

  /** `authTime`: when the person signed in (unix seconds), carried over when a console session is renewed. */
  async sign(p: Principal, opts: { authTime?: number } = {}): Promise<string> {
    const authTime = opts.authTime ?? Math.floor(Date.now() / 1000);
    return new SignJWT({
      org: p.orgId,
      roles: p.roles,
      kyc_completed: p.kycCompleted,
      auth_time: authTime,
      ...(p.apiKeyId && { akid: p.apiKeyId }),
      ...(p.consoleSession && { sid: p.consoleSession }),
    })
      .setProtectedHeader({ alg: ALG, kid: this.publicJwk.kid!, typ: 'at+jwt' })
      .setSubject(p.userId)
      .setIssuer(ACCESS_TOKEN_ISSUER)
      .setAudience(ACCESS_TOKEN_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.privateKey);
  }

  /**
   * From now on, a token whose API key was revoked or whose console session ended is refused
   * (identity/token-liveness.ts). The API installs it once per process (server/app.ts).
   */
  checkLiveness(liveness: TokenLiveness): void {
    this.liveness ??= liveness;
  }

  /** Forgets this process's verdict on a key or session it has just revoked, so the revocation holds here at once. */
  forget(kind: 'key' | 'session', id: string): void {
    this.liveness?.forget(kind, id);
  }

  /** `fresh`: ask about the token's key or session now, not from this process's memory of it. */
  async verify(token: string, opts: { fresh?: boolean } = {}): Promise<Principal> {
    const principal = await this.verifySignature(token);
    if (this.liveness) await timed('liveness', () => this.liveness!.assertLive(principal, opts));
    return principal;
  }

  private async verifySignature(token: string): Promise<Principal> {
    const known = this.verified.get(token);
    if (known && known.expiresAt > Date.now()) return known.principal;
    const verdict = await this.verifyAnew(token);
    if (this.verified.size >= VERIFIED_LIMIT) this.verified.clear();
    this.verified.set(token, verdict);
    return verdict.principal;
  }

  private async verifyAnew(token: string): Promise<{ principal: Principal; expiresAt: number }> {
    try {
      const { payload } = await jwtVerify(token, this.keySet, {
        algorithms: [ALG],
        issuer: ACCESS_TOKEN_ISSUER,
        audience: ACCESS_TOKEN_AUDIENCE,
        typ: 'at+jwt',
      });
      const roles = Array.isArray(payload.roles) ? payload.roles.filter((r): r is Role => ROLES.includes(r)) : [];
      if (typeof payload.sub !== 'string' || typeof payload.org !== 'string' || typeof payload.exp !== 'number')
        throw new Error('claims missing');
      return {
        principal: {
          userId: payload.sub,
          orgId: payload.org,
          roles,
          kycCompleted: payload.kyc_completed === true,
          ...(typeof payload.akid === 'string' && { apiKeyId: payload.akid }),
          ...(typeof payload.sid === 'string' && { consoleSession: payload.sid }),
        },
        expiresAt: payload.exp * 1000,
      };
    } catch (err) {
      const expired = (err as { code?: string }).code === 'ERR_JWT_EXPIRED';
      throw expired
        ? unauthenticated('The access token has expired', 'TOKEN_EXPIRED')
        : unauthenticated('The access token is not valid', 'INVALID_TOKEN');
    }
  }

  /** The signing key first, then the rest of the rotation. */
  jwks(): { keys: JWK[] } {
    return { keys: [this.publicJwk, ...this.publishedJwks] };
  }
}

/** Verified tokens kept at most; past it the cache starts again (each entry is a few hundred bytes). */
const VERIFIED_LIMIT = 10_000;

function pemBlocks(text: string): string[] {
  return text.match(/-----BEGIN [A-Z ]+-----[\s\S]+?-----END [A-Z ]+-----/g) ?? [];
}

async function publicOf(pem: string): Promise<CryptoKey> {
  const spki = createPublicKey(pem).export({ type: 'spki', format: 'pem' }).toString();
  return importSPKI(spki, ALG, { extractable: true });
}

async function toJwk(publicKey: CryptoKey): Promise<JWK> {
  const jwk = await exportJWK(publicKey);
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: ALG, use: 'sig' };
}
