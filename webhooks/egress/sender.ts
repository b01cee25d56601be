import type { AttemptInput } from '../../domain/webhook-messages';
import { logger } from '../../lib/runtime/logger';
import type { SsrfPolicy } from '../../lib/runtime/ssrf-guard';
import type { HostResolver } from '../../lib/runtime/dns-resolver';
import type { Finished, Target } from '../deliveries/attempt-store';
import { connectionFor, post, type Connection, type PostResult } from './post';
import { openingCache, type SecretBox } from '../secrets/secret-box';
import { endpointKeys, signedRequest } from '../secrets/signing';
import { bodyAtVersion } from '../../domain/payload-versions';
import { parseRetryAfter } from '../../domain/retry-schedule';
import { tracingOn } from '../../lib/runtime/tracing';
import { tracedPost } from './post-span';
import { mtlsPools } from './mtls-agents';
import { oauth2Tokens } from './oauth2-tokens';
import { egressRoute } from './proxy-connect';
import type { EgressProxy, NoProxyRule } from '../../lib/runtime/config-parsers';
import { explainMtlsFailure, postWithBearer, REDACTED_BEARER } from './authenticated-post';
import type { PersonalKeys } from '../../db/personal-keys';
import { addCustomHeaders, maskedHeaders } from '../endpoints/custom-headers';
import { holdsSealed, openJsonText, sealedKeyIds, sealWith, type DataKey } from '../../lib/personal-data';

export interface Sender {
  /** Signs and POSTs one attempt; every outcome, a delivery that cannot be signed included, is a result. */
  send(target: Target, input: AttemptInput): Promise<Finished>;
}

/**
 * The one way an attempt goes out (spec §6.3–§6.5): signed with the endpoint's current secret (and
 * the replaced one while its overlap lasts), POSTed on the process's one connection pool, whose
 * lookup refuses forbidden addresses. Secrets are opened once per process and never logged.
 */
export function createSender(deps: {
  secrets: SecretBox;
  ssrf: SsrfPolicy;
  resolver: HostResolver;
  retryAfterCapMs: number;
  /** WEBHOOK_HTTP_PROXY and WEBHOOK_NO_PROXY: every POST and token request through the proxy (docs/decisions/0405-egress-through-a-connect-proxy.md). */
  egress?: { proxy: EgressProxy; noProxy: NoProxyRule[] };
  /** Investors' data keys: a body's sealed personal fields are opened as it goes out (decision 0313). */
  personal?: Pick<PersonalKeys, 'open'>;
}): Sender {
  const box = openingCache(deps.secrets);
  let connection: Connection | undefined;
  const route = deps.egress && egressRoute(deps.egress.proxy, deps.egress.noProxy);
  const shared = () => (connection ??= connectionFor(deps.ssrf, deps.resolver, route));
  // Endpoints that authenticate at the transport: their own pools (mTLS) or tokens (OAuth2, on the shared pool).
  const mtls = mtlsPools({ policy: deps.ssrf, resolver: deps.resolver, box, ...(route && { route }) });
  const tokens = oauth2Tokens({ box, connection: shared });
  return {
    async send(t, input) {
      let opened: { body: string; excerptKey: DataKey | null };
      try {
        opened = await openBody(t.body, t.org_id, deps.personal);
      } catch (err) {
        logger.error({ deliveryId: input.deliveryId, err: (err as Error).message }, 'personal data keys unavailable');
        return notSent(input, PERSONAL_DATA_UNAVAILABLE);
      }
      let request;
      try {
        // In the version the delivery was planned in, then signed over exactly those bytes: the same on every
        // attempt, in either delivery shape (docs/decisions/0420-versioned-payloads.md).
        request = signedRequest(endpointKeys(box, t), bodyAtVersion(opened.body, t.payload_version), {
          eventId: t.event_id,
          eventType: t.event_type,
          deliveryId: input.deliveryId,
          timestamp: new Date(t.occurred_at).toISOString(),
        });
      } catch (err) {
        // A poison delivery (a secret that no longer opens) is a recorded failure, not a wedged queue.
        logger.error({ deliveryId: input.deliveryId, err: (err as Error).message }, 'delivery could not be signed');
        return notSent(input, SIGNING_FAILED);
      }
      // The endpoint's own static headers, beside the service's and never over them (decision 0400).
      let secretHeaders: string[];
      try {
        secretHeaders = addCustomHeaders(box, t, request.headers);
      } catch (err) {
        logger.error(
          { deliveryId: input.deliveryId, err: (err as Error).message },
          'header values could not be opened',
        );
        return notSent(input, HEADERS_UNAVAILABLE);
      }
      const auth = t.authentication;
      let via: Connection;
      if (auth?.type === 'mtls') {
        try {
          via = mtls.connectionFor(t.endpoint_id, auth, t.authentication_secret_ciphertext!);
        } catch (err) {
          logger.error({ deliveryId: input.deliveryId, err: (err as Error).message }, 'client key could not be opened');
          return notSent(input, AUTHENTICATION_UNAVAILABLE);
        }
      } else via = shared();
      // Traced, the POST is a span in the publishing request's trace; off, a consumer that
      // asked for it still gets the publisher's traceparent. Not signed (docs/decisions).
      const traced = tracingOn();
      if (!traced && t.send_traceparent && t.traceparent) request.headers.traceparent = t.traceparent;
      const once = () => (traced ? tracedPost(t, request, via) : post(t.url, request, via));
      let res: PostResult;
      if (!auth) res = await once();
      else if (auth.type === 'mtls') {
        res = await once();
        if (res.status === null && res.error !== null) res = { ...res, error: explainMtlsFailure(res.error) };
      } else {
        let answered;
        try {
          answered = await postWithBearer(tokens, t, request, once);
        } catch (err) {
          // A client secret that no longer opens: recorded like a signing secret that does not.
          logger.error(
            { deliveryId: input.deliveryId, err: (err as Error).message },
            'client secret could not be opened',
          );
          return notSent(input, AUTHENTICATION_UNAVAILABLE);
        }
        if (!answered.sent) return { ...notSent(input, answered.error!), durationMs: answered.durationMs };
        // The record keeps that a token went, never the token (it is a credential until it expires).
        request.headers.authorization = REDACTED_BEARER;
        res = answered;
      }
      return {
        input,
        durationMs: res.durationMs,
        responseStatus: res.status,
        // A receiver may echo what it got: kept under the same investor's key as the body's personal fields.
        responseBody: res.body !== null && opened.excerptKey ? sealWith(opened.excerptKey, res.body) : res.body,
        error: res.error,
        // Exactly as sent (a traced POST adds its traceparent to these before sending), secret values masked.
        requestHeaders: maskedHeaders(request.headers, secretHeaders),
        retryAfterMs:
          res.status === null ? null : parseRetryAfter(res.headers?.['retry-after'], new Date(), deps.retryAfterCapMs),
      };
    },
  };
}

/**
 * The body as it goes out (docs/decisions/0313-erasure-by-crypto-shredding.md): personal fields in
 * clear, or the erased marker once their investor's key is gone (a delivery still pending at an
 * erasure sends the marker), and the key the attempt's response excerpt is kept under.
 */
async function openBody(
  stored: string,
  orgId: string,
  personal: Pick<PersonalKeys, 'open'> | undefined,
): Promise<{ body: string; excerptKey: DataKey | null }> {
  if (!personal || !holdsSealed(stored)) return { body: stored, excerptKey: null };
  const ids = sealedKeyIds(stored);
  // Only the delivery's own organisation's keys open (docs/decisions/0381-erasure-complete.md).
  const keys = await personal.open(orgId, ids);
  const live = ids.find((id) => keys.get(id));
  return { body: openJsonText(stored, keys), excerptKey: live ? { id: live, key: keys.get(live)! } : null };
}

/** An attempt recorded without a request: it counts as a failed attempt of the schedule. */
export function notSent(input: AttemptInput, error: string): Finished {
  return {
    input,
    durationMs: 0,
    responseStatus: null,
    responseBody: null,
    error,
    retryAfterMs: null,
    requestHeaders: null,
  };
}

/** An endpoint whose client key or client secret no longer opens: a failed attempt, never sent. */
const AUTHENTICATION_UNAVAILABLE =
  "AUTHENTICATION_UNAVAILABLE: not sent, the endpoint's client key or client secret could not be opened";
/** An endpoint whose secret header values no longer open: a failed attempt, never sent without them. */
const HEADERS_UNAVAILABLE = "HEADERS_UNAVAILABLE: not sent, the endpoint's secret header values could not be opened";
/** The investors' keys could not be read (the database): a failed attempt, retried on schedule. */
const PERSONAL_DATA_UNAVAILABLE = 'PERSONAL_DATA_UNAVAILABLE: not sent, the personal data keys could not be read';

/** A delivery whose secret no longer opens: recorded as a failed attempt, never sent. */
export const SIGNING_FAILED = 'SIGNING_FAILED';

/** Why an attempt went nowhere while the endpoint's circuit was open. */
export const CIRCUIT_OPEN = 'CIRCUIT_OPEN: not sent, the endpoint failed repeatedly and its circuit is open';
