import { z } from 'zod';
import { blankAsUnset, bool, parseAddressRanges } from '../config-parsers';

/**
 * Metrics ports and traces. Part of ConfigSchema (lib/runtime/config-schema.ts).
 */
export const telemetrySettings = {
  /** Worker: port of the Temporal SDK's own Prometheus exporter (/metrics). Unset: not exported. */
  TEMPORAL_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** Worker: port serving the service's own metrics (webhook deliveries, attempts, latency). Unset: not served. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** API: port serving /metrics (HTTP by route and status), apart from the public PORT. Unset: not served. */
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** Address the metrics ports (API and worker) bind to. */
  METRICS_HOST: z.string().default('127.0.0.1'),
  /**
   * Traces, the OpenTelemetry SDK's standard variables. Tracing is on only when
   * OTEL_TRACES_EXPORTER names an exporter (`otlp`, `zipkin`, `console`) or an OTLP endpoint is
   * named (then OTLP); unset, no SDK starts and nothing is instrumented. OTEL_TRACES_EXPORTER=none
   * or OTEL_SDK_DISABLED=true turn it off whatever else is set. `zipkin` posts to
   * OTEL_EXPORTER_ZIPKIN_ENDPOINT (the spec's default http://localhost:9411/api/v2/spans); that
   * endpoint without OTEL_TRACES_EXPORTER is refused (loadTracingConfig), as it selects nothing. The
   * exporters and sampler read their other OTEL_* variables (headers, timeout, OTEL_TRACES_SAMPLER)
   * themselves, as the SDK documents.
   */
  // Empty counts as unset, as the OpenTelemetry spec says (compose passes `${OTEL_TRACES_EXPORTER:-}`).
  OTEL_SDK_DISABLED: blankAsUnset(bool.default(false)),
  OTEL_TRACES_EXPORTER: blankAsUnset(z.enum(['otlp', 'zipkin', 'console', 'none']).optional()),
  OTEL_EXPORTER_OTLP_ENDPOINT: blankAsUnset(z.url({ protocol: /^https?$/ }).optional()),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: blankAsUnset(z.url({ protocol: /^https?$/ }).optional()),
  /** @readBy the Zipkin exporter, from the environment; validated here so a bad URL stops the start. */
  OTEL_EXPORTER_ZIPKIN_ENDPOINT: blankAsUnset(z.url({ protocol: /^https?$/ }).optional()),
  /** The `service.name` on every span; unset: `tranche-api` or `tranche-worker`. */
  OTEL_SERVICE_NAME: blankAsUnset(z.string().min(1).optional()),
  /**
   * Callers whose W3C `traceparent` (and `tracestate`) the API continues: addresses or CIDR ranges,
   * comma-separated, matched against the connection's peer (behind a proxy, the proxy: trust it only
   * if it removes its clients' trace headers). Unset: nobody; each request starts a trace of its
   * own and keeps the caller's context as a span link. Baggage is never taken nor passed on, and
   * OTEL_PROPAGATORS is not read (docs/decisions/0262-traces-trust-nobody.md).
   */
  TRACE_TRUSTED_CALLERS: blankAsUnset(z.string().default('').transform(parseAddressRanges)),
};
