import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor, ConsoleSpanExporter } from '@opentelemetry/sdk-trace-base';
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

/** Which exporter OTEL_TRACES_EXPORTER selected (lib/tracing.ts). */
export type TracesExporter = 'otlp' | 'zipkin' | 'console';

/**
 * The OpenTelemetry Node SDK pieces (loaded only when tracing is on, lib/tracing.ts): a tracer
 * provider exporting in batches (OTLP over HTTP, Zipkin's JSON v2 API, or the console), registered
 * globally with the W3C propagator and AsyncLocalStorage context, the http and pg instrumentations,
 * and Temporal's interceptors with the sink that exports workflow spans from the worker's side of
 * the sandbox, through the same processor and exporter. The exporters (OTEL_EXPORTER_OTLP_*,
 * OTEL_EXPORTER_ZIPKIN_ENDPOINT), batching and sampler read their own OTEL_* variables.
 * @public (required by lib/tracing.ts only when tracing is on, so no import names it)
 */
export function startSdk(serviceName: string, exporter: TracesExporter): TracingSdk {
  const resource = new Resource({ [ATTR_SERVICE_NAME]: serviceName });
  const processor = new BatchSpanProcessor(
    exporter === 'zipkin'
      ? new ZipkinExporter()
      : exporter === 'console'
        ? new ConsoleSpanExporter()
        : new OTLPTraceExporter(),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => UNTRACED.test(req.url ?? '') }),
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
