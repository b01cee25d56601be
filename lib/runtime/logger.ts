import { trace } from '@opentelemetry/api';
import pino from 'pino';

const UNTRACED = Object.freeze({});

/**
 * The one logger. JSON lines, with `trace_id` and `span_id` inside a span; anything that looks like a credential is redacted at the
 * source so a secret can never reach a log line by accident.
 */
export const logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: 'tranche' },
  // A line written inside a span carries its ids; with tracing off there is never one.
  mixin() {
    const span = trace.getActiveSpan();
    if (!span) return UNTRACED;
    const { traceId, spanId } = span.spanContext();
    return { trace_id: traceId, span_id: spanId };
  },
  // pino merges into the mixin's object: a line outside a span is written as given, nothing made.
  mixinMergeStrategy: (line: object, ids: object) => (ids === UNTRACED ? line : Object.assign(ids, line)),
  redact: {
    paths: [
      'authorization',
      '*.authorization',
      'req.headers.authorization',
      'req.headers["x-api-key"]',
      // The console's per-process proof (api/middleware/client-address.ts), should a request's headers ever be logged.
      'req.headers["x-tranche-console-proof"]',
      '*["x-tranche-console-proof"]',
      '*.signing_secret',
      '*.signingSecret',
      '*.token',
      '*.password',
      '*.secret',
    ],
    censor: '[redacted]',
  },
});
