import { IncomingMessage } from 'node:http';
import { BlockList, isIPv4 } from 'node:net';
import {
  defaultTextMapGetter,
  isSpanContextValid,
  ROOT_CONTEXT,
  trace,
  type Attributes,
  type Span,
  type SpanContext,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor, ConsoleSpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ZipkinExporter } from '@opentelemetry/exporter-zipkin';
import { Resource } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';

/** Requests that make no span: scrapes and probes (/metrics, /health, /ready), which would drown the traces. */
const UNTRACED = /^\/(metrics|health|ready)(\/|\?|$)/;

export interface TracingSdk {
  shutdown(): Promise<void>;
  clientInterceptors(): WorkflowClientInterceptor[];
  workerOptions(workflowModule: string): Pick<WorkerOptions, 'interceptors' | 'sinks'>;
}

/** Which exporter OTEL_TRACES_EXPORTER selected (lib/runtime/tracing.ts). */
export type TracesExporter = 'otlp' | 'zipkin' | 'console';

/** TRACE_TRUSTED_CALLERS, as lib/runtime/config.ts parses it. */
type AddressRange = { address: string; prefix: number; family: 'ipv4' | 'ipv6' };

/**
 * The only propagator: W3C Trace Context. No baggage (a client's baggage would otherwise ride every
 * outgoing request, to Stripe and the rest), and OTEL_PROPAGATORS is not read, so no other header
 * format (b3, jaeger) lets a caller in (docs/decisions/0262-traces-trust-nobody.md).
 */
const PROPAGATOR = new W3CTraceContextPropagator();
/** Headers that carry a caller's trace context or baggage, in any format this SDK could read. */
const CONTEXT_HEADERS = ['traceparent', 'tracestate', 'baggage'];

/**
 * Paths whose segments are capabilities (whoever holds the URL may act): the sandbox's payment
 * pages, `/sandbox/:kind/:session_id[/:outcome]` (api/payments/sandbox-pages-router.ts). A span
 * keeps their shape, never the value. Every query string is dropped (`/console/auth/callback?code=…`).
 */
const CAPABILITY_PATHS: [RegExp, string][] = [[/^(\/sandbox\/[^/]+\/)[^/]+/, '$1:session_id']];

/** A path (or URL) as spans may keep it: no query, no fragment, capability segments replaced. */
function spanSafeTarget(target: string): string {
  let url: URL;
  try {
    url = new URL(target, 'http://relative.invalid');
  } catch {
    return target.replace(/[?#].*$/s, '');
  }
  let path = url.pathname;
  for (const [pattern, replacement] of CAPABILITY_PATHS) path = path.replace(pattern, replacement);
  return url.host === 'relative.invalid' ? path : `${url.protocol}//${url.host}${path}`;
}

/**
 * The OpenTelemetry Node SDK pieces (loaded only when tracing is on, lib/runtime/tracing.ts): a tracer
 * provider exporting in batches (OTLP over HTTP, Zipkin's JSON v2 API, or the console), registered
 * globally with the W3C propagator and AsyncLocalStorage context, the http and pg instrumentations,
 * and Temporal's interceptors with the sink that exports workflow spans from the worker's side of
 * the sandbox, through the same processor and exporter. The exporters (OTEL_EXPORTER_OTLP_*,
 * OTEL_EXPORTER_ZIPKIN_ENDPOINT), batching and sampler read their own OTEL_* variables.
 * @public (required by lib/runtime/tracing.ts only when tracing is on, so no import names it)
 */
export function startSdk(
  serviceName: string,
  exporter: TracesExporter,
  trustedCallers: AddressRange[] = [],
): TracingSdk {
  const resource = new Resource({ [ATTR_SERVICE_NAME]: serviceName });
  const processor = new BatchSpanProcessor(
    exporter === 'zipkin'
      ? new ZipkinExporter()
      : exporter === 'console'
        ? new ConsoleSpanExporter()
        : new OTLPTraceExporter(),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register({ propagator: PROPAGATOR });
  const trusted = new BlockList();
  for (const r of trustedCallers) trusted.addSubnet(r.address, r.prefix, r.family);
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED.test(req.url ?? ''),
        // Runs before the instrumentation reads the headers: an untrusted caller's context is taken out.
        startIncomingSpanHook: (req) => untrustedContextOut(req, trusted),
        // Server and client spans alike (Stripe, an identity provider's JWKS): URLs made span-safe.
        requestHook: (span, req) => {
          if (req instanceof IncomingMessage) linkCaller(span, req);
          redact(span);
        },
      }),
      // Only queries inside a traced piece of work: the dispatcher's rounds and the sweep, every
      // second or two, would otherwise each be a trace of their own (and the LISTEN connection's
      // connect span the parent of every wake-up).
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  return {
    shutdown: () => provider.shutdown(),
    clientInterceptors: () => [new OpenTelemetryWorkflowClientInterceptor()],
    workerOptions: (workflowModule) => ({
      interceptors: {
        workflowModules: [workflowModule],
        activity: [
          (ctx) => ({
            inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
            outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
          }),
        ],
      },
      sinks: { exporter: makeWorkflowExporter(processor, resource) },
    }),
  };
}

/** The contexts taken from untrusted callers, for the link their request's span keeps. */
const callerContexts = new WeakMap<IncomingMessage, SpanContext>();

/**
 * From a caller not in TRACE_TRUSTED_CALLERS, removes the trace headers before the instrumentation
 * extracts them, so the request starts a trace of its own (a `-00` cannot un-sample the work it
 * causes, nor a `-01` force sampling) and remembers the caller's context for a span link. Baggage
 * is removed from everyone. Returns the span's extra attributes: the caller's traceparent, since
 * Zipkin keeps no links.
 */
function untrustedContextOut(req: IncomingMessage, trusted: BlockList): Attributes {
  const headers = req.headers;
  delete headers.baggage;
  if (!('traceparent' in headers) && !('tracestate' in headers)) return {};
  if (isTrusted(req.socket.remoteAddress, trusted)) return {};
  const caller = trace.getSpanContext(PROPAGATOR.extract(ROOT_CONTEXT, headers, defaultTextMapGetter));
  for (const name of CONTEXT_HEADERS) delete headers[name];
  if (!caller || !isSpanContextValid(caller)) return {};
  callerContexts.set(req, caller);
  return { 'trace.caller_traceparent': `00-${caller.traceId}-${caller.spanId}-0${caller.traceFlags & 1}` };
}

function isTrusted(address: string | undefined, trusted: BlockList): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : null;
  return v4 ? trusted.check(v4, 'ipv4') : trusted.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
}

/** A server span keeps an untrusted caller's context as a link, not as its parent. */
function linkCaller(span: Span, req: IncomingMessage): void {
  const caller = callerContexts.get(req);
  if (caller) span.addLink({ context: caller, attributes: { 'link.reason': 'untrusted caller' } });
}

/** The URL attributes the instrumentation set (either semantic-convention generation), made span-safe. */
function redact(span: Span): void {
  const attributes = (span as unknown as Partial<ReadableSpan>).attributes ?? {};
  for (const key of ['http.url', 'http.target', 'url.full', 'url.path']) {
    const value = attributes[key];
    if (typeof value === 'string') span.setAttribute(key, spanSafeTarget(value));
  }
  if ('url.query' in attributes) span.setAttribute('url.query', '');
}
