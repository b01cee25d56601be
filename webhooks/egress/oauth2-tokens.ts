import { request } from 'undici';
import type { EndpointAuthentication } from '../../db/entities/webhook-rows';
import { authenticationAad } from '../secrets/authentication';
import { readCapped, refuseLiteral, type Connection } from './post';
import type { SecretBox } from '../secrets/secret-box';
import { cutToCodePoints } from '../../lib/text';

type OAuth2Settings = Extract<EndpointAuthentication, { type: 'oauth2_client_credentials' }>;

/** A token endpoint answers within this or the attempt fails (every external call has a timeout). */
const TOKEN_TIMEOUT_MS = 10_000;
/** What a token answer may be at most. */
const TOKEN_BODY_LIMIT = 16_384;
/** A token is fetched again this long before it expires (or at 90% of its life, if that is sooner). */
const REFRESH_AHEAD_MS = 60_000;
/** A token whose answer gave no expires_in is kept this long (a 401 refreshes it sooner). */
const UNSTATED_LIFETIME_MS = 300_000;
const CACHE_LIMIT = 10_000;

/** Whom a token is for: the endpoint, and the origin (scheme, host, port) its POSTs go to. */
export interface TokenAudience {
  endpointId: string;
  origin: string;
}

/** Why an attempt could not get a token: what its record's error says. */
export class TokenError extends Error {}

/**
 * OAuth2 client-credentials tokens for the endpoints that require them (RFC 6749 §4.4;
 * docs/decisions/0319-authenticated-receivers.md): fetched from the token URL with the client's id
 * and secret (HTTP Basic, §2.3.1), on the process's guarded pool (the SSRF guard at connect, a
 * literal address checked here) with a timeout; kept until shortly before they expire. Keyed by the
 * endpoint, the origin its POSTs go to, the token URL and the sealed secret, so a changed
 * authentication never uses a token of the old one, and a token minted while the endpoint pointed at
 * one origin is never sent to another (docs/decisions/0377-authentication-stays-with-its-origin.md);
 * concurrent attempts of one endpoint share one fetch. Tokens and secrets are never logged.
 */
export function oauth2Tokens(deps: { box: SecretBox; connection: () => Connection }) {
  const cache = new Map<string, { token: string; refreshAt: number }>();
  const fetching = new Map<string, Promise<string>>();
  const keyOf = (to: TokenAudience, settings: OAuth2Settings, sealed: string) =>
    `${to.endpointId}\n${to.origin}\n${settings.token_url}\n${sealed}`;

  async function fetchToken(endpointId: string, settings: OAuth2Settings, sealed: string, key: string) {
    const secret = deps.box.open(authenticationAad(endpointId), sealed);
    const form = (v: string) => new URLSearchParams({ v }).toString().slice(2);
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      ...(settings.scope !== null && { scope: settings.scope }),
    }).toString();
    const via = deps.connection();
    let status: number;
    let text: string | null;
    try {
      refuseLiteral(settings.token_url, via.policy);
      const res = await request(settings.token_url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${Buffer.from(`${form(settings.client_id)}:${form(secret)}`).toString('base64')}`,
        },
        body,
        dispatcher: via.dispatcher,
        signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
      });
      status = res.statusCode;
      text = await readCapped(res.body, TOKEN_BODY_LIMIT);
    } catch (err) {
      const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
      const why =
        e.name === 'TimeoutError'
          ? `did not answer within ${TOKEN_TIMEOUT_MS / 1000} s`
          : `could not be reached (${e.code ?? e.cause?.code ?? e.cause?.message ?? e.message})`;
      throw new TokenError(`OAUTH2_TOKEN_FAILED: the token endpoint ${why}`);
    }
    const answer = parse(text);
    if (status !== 200) {
      const said = typeof answer?.error === 'string' ? `: ${answer.error}` : '';
      const described = typeof answer?.error_description === 'string' ? ` (${answer.error_description})` : '';
      // The endpoint's own words may hold anything JSON can: kept whole characters, storable.
      throw new TokenError(
        cutToCodePoints(
          `OAUTH2_TOKEN_FAILED: the token endpoint answered ${status}${said}${described}`.toWellFormed(),
          500,
        ),
      );
    }
    const token = answer?.access_token;
    if (typeof token !== 'string' || token === '' || !/^[\x21-\x7E]+$/.test(token))
      throw new TokenError('OAUTH2_TOKEN_FAILED: the token endpoint answered 200 without a usable access_token');
    if (answer?.token_type !== undefined && String(answer.token_type).toLowerCase() !== 'bearer')
      throw new TokenError(
        `OAUTH2_TOKEN_FAILED: the token endpoint issued a ${cutToCodePoints(String(answer.token_type).toWellFormed(), 40)} token, not a bearer token`,
      );
    const expiresIn = Number(answer!.expires_in);
    const lifetimeMs = Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : UNSTATED_LIFETIME_MS;
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(key, { token, refreshAt: Date.now() + lifetimeMs - Math.min(REFRESH_AHEAD_MS, lifetimeMs / 10) });
    return token;
  }

  return {
    /** A token for the endpoint's POSTs to that origin: the kept one while it is fresh, else a new one. Throws a TokenError. */
    get(to: TokenAudience, settings: OAuth2Settings, sealed: string): Promise<string> {
      const key = keyOf(to, settings, sealed);
      const kept = cache.get(key);
      if (kept && kept.refreshAt > Date.now()) return Promise.resolve(kept.token);
      let shared = fetching.get(key);
      if (!shared) {
        shared = fetchToken(to.endpointId, settings, sealed, key).finally(() => fetching.delete(key));
        fetching.set(key, shared);
      }
      return shared;
    },
    /** The receiver refused this token (401): it is not used again; the next get fetches another. */
    drop(to: TokenAudience, settings: OAuth2Settings, sealed: string, token: string): void {
      const key = keyOf(to, settings, sealed);
      if (cache.get(key)?.token === token) cache.delete(key);
    },
  };
}

function parse(text: string | null): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text ?? '');
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
