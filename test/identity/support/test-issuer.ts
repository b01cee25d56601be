import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

interface Key {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function newKey(): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID();
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

export interface SignOptions {
  sub?: string;
  roles?: unknown;
  orgId?: string;
  audience?: string;
  issuer?: string;
  /** Seconds from now; negative means already expired. */
  expiresIn?: number;
  /** Seconds from now the token becomes valid. */
  notBefore?: number;
  /** Sign with a key the JWKS does not publish (under the current kid). */
  foreignKey?: boolean;
}

/**
 * A real OpenID provider for tests: an HTTP server publishing a JWKS, RSA keys that can rotate, and
 * ID tokens signed like a provider signs them. `hang` makes the JWKS endpoint never answer.
 */
export class TestIssuer {
  readonly audience = 'tranche-test-client';
  jwksRequests = 0;
  hang = false;
  private keys: Key[] = [];
  private foreign!: Key;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<TestIssuer> {
    let issuer: TestIssuer | undefined;
    const server = createServer((req, res) => {
      if (req.url !== '/jwks.json' || !issuer) return void res.writeHead(404).end();
      issuer.jwksRequests += 1;
      if (issuer.hang) return; // never answers: the service must give up on its own
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ keys: issuer.keys.map((k) => k.publicJwk) }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = new TestIssuer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    issuer.keys = [await newKey()];
    issuer.foreign = await newKey();
    return issuer;
  }

  get jwksUri(): string {
    return `${this.url}/jwks.json`;
  }

  /** The OIDC_ISSUERS entry for this issuer. */
  config(extra: { org_ids?: string[] } = {}) {
    return { issuer: this.url, jwks_uri: this.jwksUri, audience: this.audience, ...extra };
  }

  /** Replaces the signing key: the old one disappears from the JWKS, as after a provider's rotation. */
  async rotate(): Promise<void> {
    this.keys = [await newKey()];
  }

  async sign(o: SignOptions = {}): Promise<string> {
    const key = this.keys[0]!;
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {};
    if (o.roles !== undefined) claims.roles = o.roles;
    if (o.orgId) claims.org_id = o.orgId;
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
      .setIssuer(o.issuer ?? this.url)
      .setAudience(o.audience ?? this.audience)
      .setSubject(o.sub ?? `user-${randomUUID()}`)
      .setIssuedAt(now - 5)
      .setExpirationTime(now + (o.expiresIn ?? 300));
    if (o.notBefore !== undefined) jwt.setNotBefore(now + o.notBefore);
    return jwt.sign(o.foreignKey ? this.foreign.privateKey : key.privateKey);
  }

  /** The same claims with `alg: none` and an empty signature. */
  unsigned(sub = `user-${randomUUID()}`): string {
    const now = Math.floor(Date.now() / 1000);
    const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iss: this.url, aud: this.audience, sub, iat: now, exp: now + 300 })}.`;
  }

  /** A token signed with a shared secret (HS256), which an OIDC provider's JWKS can never verify. */
  async symmetric(): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(this.url)
      .setAudience(this.audience)
      .setSubject('user-hs')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('a-shared-secret-of-32-bytes-long!'));
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
