import type { EndpointHeader } from '../../db/entities/webhook-rows';
import type { SecretBox } from '../secrets/secret-box';

/**
 * An endpoint's static headers (docs/decisions/0400-custom-headers-per-endpoint.md): what may be
 * given, how the secret ones are sealed, and how they join a signed request without displacing any
 * header the service sets.
 */

/** At most this many headers per endpoint. */
export const MAX_CUSTOM_HEADERS = 20;
/** At most this many bytes of names and values together (ASCII only, so characters are bytes). */
export const MAX_CUSTOM_HEADER_BYTES = 4096;
/** What an attempt record and the audit show in place of a secret header's value. */
const SECRET_HEADER_MASK = '[redacted]';

/** The associated data the secret values are sealed under: this endpoint's, and for this use only. */
export const headersAad = (endpointId: string) => `${endpointId}:headers`;

/** RFC 9110 §5.6.2 token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,100}$/;
/** Visible ASCII and inner spaces: no control character (CR, LF, NUL, tab), nothing a proxy could trim. */
const VALUE = /^[\x21-\x7E](?:[\x20-\x7E]{0,1022}[\x21-\x7E])?$/;

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect']);
/** Set by the service on every POST (webhooks/secrets/signing.ts, the tracing and OAuth2 paths). */
const SERVICE_SET = new Set(['user-agent', 'traceparent', 'tracestate', 'baggage']);
const CREDENTIALS = new Set(['authorization', 'cookie']);

/**
 * Why a header name may not be given, or null when it may. Case does not matter: HTTP names are
 * case-insensitive, and `X-Service-Signature` and `x-service-signature` are the same header.
 */
export function refusedHeaderName(name: string): string | null {
  if (!TOKEN.test(name))
    return "the name must be an HTTP token of 1 to 100 characters: letters, digits and !#$%&'*+-.^_`|~";
  const n = name.toLowerCase();
  if (HOP_BY_HOP.has(n) || n.startsWith('proxy-'))
    return 'a hop-by-hop header belongs to the connection, not to the delivery';
  if (n === 'host') return "Host is taken from the endpoint's url";
  if (n.startsWith('content-')) return 'Content-* headers describe the signed body and are set by the service';
  if (n.startsWith('x-service-') || n.startsWith('webhook-'))
    return 'the service sets its signature and delivery headers itself';
  if (SERVICE_SET.has(n)) return 'the service sets this header itself';
  if (CREDENTIALS.has(n))
    return 'Authorization and Cookie are not static headers: use authentication (OAuth2 or mutual TLS), or a header of your own such as X-Api-Key marked secret';
  if (n === '__proto__') return 'not a header name';
  return null;
}

/** Why a header value may not be sent as it is, or null when it may. */
export function refusedHeaderValue(value: string): string | null {
  return VALUE.test(value)
    ? null
    : 'the value must be 1 to 1024 visible ASCII characters, spaces only between them: no control characters (CR, LF, NUL, tab)';
}

/** Headers as given and checked: the stored list (secret values null) and the secret values to seal. */
export interface PreparedHeaders {
  list: EndpointHeader[];
  secrets: Record<string, string>;
}

/** The stored columns of a set of headers; none is both columns null. */
export function headerColumns(box: Pick<SecretBox, 'seal'>, endpointId: string, h: PreparedHeaders | null) {
  const secretNames = h ? Object.keys(h.secrets) : [];
  return {
    headers: h && h.list.length ? JSON.stringify(h.list) : null,
    headers_secret_ciphertext:
      h && secretNames.length ? box.seal(headersAad(endpointId), JSON.stringify(h.secrets)) : null,
  };
}

/** The secret values of an endpoint's headers, opened; throws when they do not open. */
export function openSecretHeaders(
  box: Pick<SecretBox, 'open'>,
  endpointId: string,
  sealed: string | null,
): Record<string, string> {
  if (sealed === null) return {};
  const text = box.open(headersAad(endpointId), sealed);
  try {
    return JSON.parse(text) as Record<string, string>;
  } catch {
    // Never the text in the message: it is the secret values.
    throw new Error('the sealed header values are not a JSON object');
  }
}

/**
 * Adds an endpoint's headers to a request's: a header the request already has (in any case) is the
 * service's and stays, as does one the deny list names, should a stored one ever predate a rule.
 * Answers the names of the secret ones sent, for the attempt record to mask.
 */
export function addCustomHeaders(
  box: Pick<SecretBox, 'open'>,
  t: { endpoint_id: string; headers: EndpointHeader[] | null; headers_secret_ciphertext: string | null },
  headers: Record<string, string>,
): string[] {
  if (!t.headers?.length) return [];
  const secrets = openSecretHeaders(box, t.endpoint_id, t.headers_secret_ciphertext);
  const taken = new Set(Object.keys(headers).map((k) => k.toLowerCase()));
  const sentSecret: string[] = [];
  for (const h of t.headers) {
    const value = h.secret ? secrets[h.name] : h.value;
    if (value == null || taken.has(h.name.toLowerCase()) || refusedHeaderName(h.name) !== null) continue;
    headers[h.name] = value;
    taken.add(h.name.toLowerCase());
    if (h.secret) sentSecret.push(h.name);
  }
  return sentSecret;
}

/** The headers as an attempt records them: each secret one's value masked. */
export function maskedHeaders(headers: Record<string, string>, secretNames: string[]): Record<string, string> {
  if (!secretNames.length) return headers;
  const masked = { ...headers };
  for (const name of secretNames) masked[name] = SECRET_HEADER_MASK;
  return masked;
}

/** What the endpoint view and the audit show: each header's value, a secret one's as null. */
export function headersShown(list: EndpointHeader[] | null): Record<string, { value: string | null; secret: boolean }> {
  return Object.fromEntries((list ?? []).map((h) => [h.name, { value: h.secret ? null : h.value, secret: h.secret }]));
}
