import type { Target } from '../deliveries/attempt-store';
import type { PostResult } from './post';
import type { SignedRequest } from '../secrets/signing';
import { TokenError, type oauth2Tokens } from './oauth2-tokens';
import { cutToCodePoints } from '../../lib/text';
import { isProxyFailure } from './proxy-connect';

type Tokens = ReturnType<typeof oauth2Tokens>;

/** What an attempt records of the bearer token it sent: that there was one, never the token. */
export const REDACTED_BEARER = 'Bearer [redacted]';

/**
 * One attempt to an OAuth2 endpoint (docs/decisions/0319-authenticated-receivers.md): with the kept
 * token, or a new one; a 401 drops that token and the POST goes once more with a freshly fetched
 * one. A token that cannot be had fails the attempt without a POST (status null) and the record
 * says why; a fresh token refused again is a 401 whose record says so.
 */
export async function postWithBearer(
  tokens: Tokens,
  t: Target,
  request: SignedRequest,
  send: () => Promise<PostResult>,
): Promise<PostResult & { sent: boolean }> {
  const settings = t.authentication as Extract<Target['authentication'], { type: 'oauth2_client_credentials' }>;
  const sealed = t.authentication_secret_ciphertext!;
  const to = { endpointId: t.endpoint_id, origin: new URL(t.url).origin };
  const started = performance.now();
  const failed = (err: unknown, answered?: PostResult) => {
    if (!(err instanceof TokenError)) throw err;
    const durationMs = Math.round(performance.now() - started);
    return answered
      ? {
          ...answered,
          error: cutToCodePoints(`${err.message}, after the receiver answered 401`, 500),
          durationMs,
          sent: true,
        }
      : { status: null, body: null, headers: null, error: err.message, durationMs, sent: false };
  };
  let token: string;
  try {
    token = await tokens.get(to, settings, sealed);
  } catch (err) {
    return failed(err);
  }
  request.headers.authorization = `Bearer ${token}`;
  const first = await send();
  if (first.status !== 401) return { ...first, sent: true };
  tokens.drop(to, settings, sealed, token);
  try {
    token = await tokens.get(to, settings, sealed);
  } catch (err) {
    return failed(err, first);
  }
  request.headers.authorization = `Bearer ${token}`;
  const second = await send();
  const durationMs = Math.round(performance.now() - started);
  if (second.status !== 401) return { ...second, durationMs, sent: true };
  return {
    ...second,
    durationMs,
    error: 'OAUTH2_TOKEN_REJECTED: the receiver answered 401 to the token and again to a freshly fetched one',
    sent: true,
  };
}

/** TLS and connection failures an mTLS endpoint's attempt may meet, said plainly in its record. */
export function explainMtlsFailure(error: string): string {
  // The egress proxy's failure is not the receiver's refusal, and keeps its own words (isProxyFailure).
  if (isProxyFailure(error)) return error;
  if (/ALERT|CERTIFICATE_REQUIRED|ECONNRESET|EPIPE|UND_ERR_SOCKET|socket hang up|other side closed/i.test(error))
    return `MTLS_REJECTED: the receiver refused the TLS connection or closed it, likely refusing our client certificate (${error})`.slice(
      0,
      500,
    );
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/i.test(error))
    return `MTLS_SERVER_UNTRUSTED: the receiver's certificate is not accepted: not chaining to the endpoint's caCertificate (or the public roots) or not for its host (${error})`.slice(
      0,
      500,
    );
  return error;
}
