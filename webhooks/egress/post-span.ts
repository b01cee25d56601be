import { SpanStatusCode } from '@opentelemetry/api';
import { inCausedSpan, traceparentOf } from '../../lib/runtime/tracing';
import type { Target } from '../deliveries/attempt-store';
import { post, type Connection, type PostResult } from './post';
import type { SignedRequest } from '../secrets/signing';

/**
 * One attempt's POST as a span (only when tracing is on): a child of the span that
 * published the event, so one trace runs from the API request through the workflow and activity
 * to the POST, whether the dispatcher or a retry's activity sends it. An endpoint that asked for
 * it gets this span's `traceparent`; it is not part of the signed content (docs/decisions).
 */
export function tracedPost(t: Target, req: SignedRequest, via: Connection): Promise<PostResult> {
  const attributes = {
    'http.request.method': 'POST',
    'server.address': hostOf(t.url),
    'webhook.event_type': t.event_type,
    'webhook.event_id': t.event_id,
    'webhook.delivery_id': t.delivery_id,
    'webhook.endpoint_id': t.endpoint_id,
  };
  return inCausedSpan('webhook POST', t.traceparent, attributes, async (span) => {
    if (t.send_traceparent) req.headers.traceparent = traceparentOf(span);
    const res = await post(t.url, req, via);
    if (res.status !== null) span.setAttribute('http.response.status_code', res.status);
    if (res.error !== null || res.status === null || res.status >= 300)
      span.setStatus({ code: SpanStatusCode.ERROR, message: res.error ?? `HTTP ${res.status}` });
    return res;
  });
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
