import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { decodeJwt } from 'jose';
import { z } from 'zod';
import type { Config } from '../lib/runtime/config';
import { newId } from '../lib/ids';
import { AppError, forbidden, unauthenticated, unavailable } from '../lib/errors';
import type { Principal } from '../domain/principal';
import type { KycEligibility } from '../domain/kyc';
import { DEV_IDP_AUDIENCE, type AccessTokens, type DevIdp, type IdTokenVerifier } from '../identity';
import { cutToCodePoints } from '../lib/text';

/** Where the console sends staff to sign in, and where it trades the code for an ID token. */
interface Provider {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
}

/** What the browser keeps (httpOnly cookie) between leaving for the provider and coming back. */
export interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
}

const Discovery = z.object({ issuer: z.string(), authorization_endpoint: z.url(), token_endpoint: z.url() });
const TokenAnswer = z.object({ id_token: z.string().min(1) });

const random = () => randomBytes(32).toString('base64url');
const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * Staff sign-in for the console: OIDC authorization code flow with PKCE at the organisation's
 * identity provider, then the same ID token checks as the token exchange (IdTokenVerifier), and an
 * access token from the same signer. It replaces the exchange's org API key (which a browser must
 * never hold) with the issuer's organisation pinning: the provider must be configured with
 * org_ids and vouch for the organisation the ID token names (docs/decisions/0101-console-sign-in.md).
 */
export function consoleSignIn(deps: {
  config: Config;
  devIdp: DevIdp | null;
  verifier: IdTokenVerifier;
  tokens: AccessTokens;
  kyc: KycEligibility;
}) {
  const { config, devIdp } = deps;
  const redirectUri = `${config.PUBLIC_BASE_URL}/console/auth/callback`;
  let provider: Promise<Provider> | null = null;

  function resolveProvider(): Promise<Provider> {
    if (devIdp && (!config.CONSOLE_OIDC_ISSUER || config.CONSOLE_OIDC_ISSUER === devIdp.issuer)) {
      return Promise.resolve({
        issuer: devIdp.issuer,
        clientId: DEV_IDP_AUDIENCE,
        authorizationEndpoint: `${devIdp.issuer}/authorize`,
        tokenEndpoint: `${devIdp.issuer}/token`,
      });
    }
    const issuer = config.CONSOLE_OIDC_ISSUER;
    const configured = config.OIDC_ISSUERS.find((i) => i.issuer === issuer);
    if (!issuer || !configured)
      return Promise.reject(unavailable('Console sign-in is not configured (CONSOLE_OIDC_ISSUER)'));
    return discover(issuer, config.OIDC_JWKS_TIMEOUT_MS).then((d) => ({
      issuer,
      clientId: config.CONSOLE_OIDC_CLIENT_ID ?? configured.audience,
      clientSecret: config.CONSOLE_OIDC_CLIENT_SECRET,
      authorizationEndpoint: d.authorization_endpoint,
      tokenEndpoint: d.token_endpoint,
    }));
  }

  async function theProvider(): Promise<Provider> {
    provider ??= resolveProvider();
    try {
      return await provider;
    } catch (err) {
      provider = null; // an outage of the provider's discovery must not stick
      throw err;
    }
  }

  return {
    /** The provider's authorize URL for a fresh sign-in, and what to remember until the callback. */
    async start(): Promise<{ url: string; pending: PendingSignIn }> {
      const p = await theProvider();
      const pending = { state: random(), nonce: random(), verifier: random() };
      const url = new URL(p.authorizationEndpoint);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: p.clientId,
        redirect_uri: redirectUri,
        scope: 'openid',
        state: pending.state,
        nonce: pending.nonce,
        code_challenge: createHash('sha256').update(pending.verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();
      return { url: url.toString(), pending };
    },

    /** The provider sent the browser back: check state, trade the code, check the ID token, sign an access token. */
    async finish(
      query: { code?: unknown; state?: unknown; error?: unknown },
      pending: PendingSignIn | null,
    ): Promise<{ accessToken: string; principal: Principal; expiresIn: number }> {
      if (typeof query.error === 'string')
        throw unauthenticated(
          `The identity provider refused the sign-in (${cutToCodePoints(query.error, 100)})`,
          'SIGN_IN_REFUSED',
        );
      if (
        !pending ||
        typeof query.state !== 'string' ||
        typeof query.code !== 'string' ||
        !sameText(query.state, pending.state)
      ) {
        throw unauthenticated('The sign-in did not start here or has expired; sign in again', 'SIGN_IN_STATE_INVALID');
      }
      const p = await theProvider();
      const idToken = await redeem(p, query.code, pending.verifier, redirectUri, config.OIDC_JWKS_TIMEOUT_MS);
      const claimedOrg = orgClaim(idToken);
      const identity = await deps.verifier.verify(idToken, claimedOrg);
      const isDev = devIdp !== null && identity.issuer === devIdp.issuer;
      if (identity.issuer !== p.issuer)
        throw unauthenticated('The ID token comes from another identity provider', 'ID_TOKEN_ISSUER_UNTRUSTED');
      if (!isDev && !identity.orgPinned)
        throw forbidden(
          'This identity provider is not pinned to organisations (org_ids), so it cannot sign in to the console',
          'ISSUER_NOT_ALLOWED_FOR_ORG',
        );
      if (identity.nonce === null || !sameText(identity.nonce, pending.nonce))
        throw unauthenticated('The ID token was not issued for this sign-in', 'ID_TOKEN_NONCE_MISMATCH');
      if (!identity.roles.some((r) => r === 'staff' || r === 'admin'))
        throw forbidden('The console is for staff and administrators', 'ROLE_REQUIRED');
      const principal: Principal = {
        userId: identity.userId,
        orgId: claimedOrg,
        roles: identity.roles,
        kycCompleted: await deps.kyc.isApproved(identity.userId, claimedOrg),
        // The id of the session record the caller opens (identity/console-sessions.ts).
        consoleSession: newId(),
      };
      return { accessToken: await deps.tokens.sign(principal), principal, expiresIn: deps.tokens.ttlSeconds };
    },
  };
}

/** The organisation comes from the ID token (there is no API key to name it); verify() then checks the issuer vouches for it. */
function orgClaim(idToken: string): string {
  let org: unknown;
  try {
    org = decodeJwt(idToken).org_id;
  } catch {
    throw unauthenticated('The ID token is not a JWT', 'ID_TOKEN_MALFORMED');
  }
  if (!z.uuid().safeParse(org).success)
    throw unauthenticated('The ID token does not name an organisation (org_id)', 'ID_TOKEN_CLAIMS_INVALID');
  return org as string;
}

async function discover(issuer: string, timeoutMs: number) {
  try {
    const res = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    const doc = Discovery.parse(await res.json());
    if (doc.issuer !== issuer) throw new Error('discovery names another issuer');
    return doc;
  } catch {
    throw unavailable("The identity provider's configuration could not be fetched; try again");
  }
}

async function redeem(
  p: Provider,
  code: string,
  verifier: string,
  redirectUri: string,
  timeoutMs: number,
): Promise<string> {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    client_id: p.clientId,
    code_verifier: verifier,
  });
  if (p.clientSecret) form.set('client_secret', p.clientSecret);
  let res: Response;
  try {
    res = await fetch(p.tokenEndpoint, { method: 'POST', body: form, signal: AbortSignal.timeout(timeoutMs) });
  } catch {
    throw unavailable('The identity provider could not be reached; try again');
  }
  if (!res.ok)
    throw new AppError(
      401,
      'SIGN_IN_CODE_REFUSED',
      'The identity provider did not accept the sign-in code; sign in again',
    );
  const answer = TokenAnswer.safeParse(await res.json().catch(() => null));
  if (!answer.success) throw unavailable('The identity provider answered without an ID token');
  return answer.data.id_token;
}
