import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Link,
  type Span,
} from '@opentelemetry/api';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import { loadTracingConfig, type TracingConfig } from './config';
import type { TracesExporter, TracingSdk } from './tracing-sdk';

/**
 * Traces (issue 21). Off unless the OTEL_* variables ask for them: then nothing below starts an
 * SDK, patches a module or allocates per call, every helper is one check of `sdk`. On, the SDK
 * (lib/runtime/tracing-sdk.ts, loaded only then) traces HTTP in and out, PostgreSQL, Temporal's client,
 * workflows and activities; the helpers here add the spans no instrumentation makes (processor
 * calls, webhook POSTs) and carry a publishing span's context to the deliveries it causes.
 */
let sdk: TracingSdk | undefined;

/** The workflow interceptors module, bundled with the workflows when tracing is on. */
export const WORKFLOW_TRACING_MODULE =
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

const TRACER = 'tranche';

/** Whether the variables turn tracing on: an exporter asked for by name, or an OTLP endpoint named. */
export function tracingWanted(c: TracingConfig): boolean {
  if (c.OTEL_SDK_DISABLED || c.OTEL_TRACES_EXPORTER === 'none') return false;
  return (
    c.OTEL_TRACES_EXPORTER !== undefined ||
    c.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined ||
    c.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined
  );
}

/**
 * Starts tracing if the environment asks for it. Must run before `pg` and `http` users load (the
 * entry points import server/tracing-preload.ts or worker/tracing-preload.ts first). Returns whether it is on.
 */
export function startTracing(defaultServiceName: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const c = loadTracingConfig(env);
  if (sdk || !tracingWanted(c)) return sdk !== undefined;
  // Loaded here and only here: with tracing off not one SDK module is read.
  const { startSdk } = require('./tracing-sdk') as typeof import('./tracing-sdk');
  // OTLP when asked for by name or by an endpoint alone (the spec's default exporter).
  const exporter: TracesExporter =
    c.OTEL_TRACES_EXPORTER === 'zipkin' || c.OTEL_TRACES_EXPORTER === 'console' ? c.OTEL_TRACES_EXPORTER : 'otlp';
  sdk = startSdk(c.OTEL_SERVICE_NAME ?? defaultServiceName, exporter, c.TRACE_TRUSTED_CALLERS);
  return true;
}

export function tracingOn(): boolean {
  return sdk !== undefined;
}

/** Exports the spans still buffered; at process end. */
export async function stopTracing(): Promise<void> {
  await sdk?.shutdown();
}

/** Temporal client interceptors: the client call's span, its context passed to the workflow in headers. */
export function temporalClientInterceptors(): WorkflowClientInterceptor[] {
  return sdk ? sdk.clientInterceptors() : [];
}

/** Worker options that trace workflows (spans exported through a sink) and activities; none when off. */
export function temporalWorkerTracing(): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  return sdk ? sdk.workerOptions(WORKFLOW_TRACING_MODULE) : {};
}

/** The W3C traceparent of the active span, to store with what it publishes; undefined when off or none. */
export function activeTraceparent(): string | undefined {
  if (!sdk || !trace.getActiveSpan()) return undefined;
  const carrier: { traceparent?: string } = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** Runs `fn` in a client span of its own (a processor call); just `fn` when tracing is off. */
export function inClientSpan<T>(name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  if (!sdk) return fn();
  return trace
    .getTracer(TRACER)
    .startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, (span) => ended(span, fn));
}

/**
 * A span for work caused by something published earlier: a child of the stored `traceparent`
 * (so it joins the publishing request's trace), linked to the span active now (an activity's)
 * when there is one; with no stored context, a child of the active span. Call only when on.
 */
export function inCausedSpan<T>(
  name: string,
  traceparent: string | null,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const stored = traceparent ? trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent })) : undefined;
  const active = trace.getActiveSpan()?.spanContext();
  const links: Link[] = stored && active ? [{ context: active }] : [];
  const parent = stored ? trace.setSpanContext(ROOT_CONTEXT, stored) : context.active();
  return trace
    .getTracer(TRACER)
    .startActiveSpan(name, { kind: SpanKind.CLIENT, attributes, links }, parent, (span) => ended(span, fn));
}

/** The traceparent header of a span, for the request it makes. */
export function traceparentOf(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 1).toString(16).padStart(2, '0')}`;
}

async function ended<T>(span: Span, fn: (span: Span) => Promise<T>): Promise<T> {
  try {
    return await fn(span);
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}
