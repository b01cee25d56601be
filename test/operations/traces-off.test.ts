import { loadTracingConfig } from '../../lib/runtime/config';
import { tracingWanted } from '../../lib/runtime/tracing';
import { runScript } from './support/traced-process';

/** Traces: off unless the OTEL_* variables ask for them. */
describe('traces', () => {
  describe('off when the OTEL_* variables are unset', () => {
    it('wants tracing only when an endpoint or an exporter is named, and never with none or the SDK disabled', () => {
      const wanted = (env: Record<string, string>) => tracingWanted(loadTracingConfig(env));
      expect(wanted({})).toBe(false);
      expect(wanted({ OTEL_SERVICE_NAME: 'x' })).toBe(false);
      expect(wanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
      expect(wanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
      expect(wanted({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
      expect(wanted({ OTEL_TRACES_EXPORTER: 'zipkin' })).toBe(true);
      expect(
        wanted({ OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_ZIPKIN_ENDPOINT: 'http://127.0.0.1:9411/api/v2/spans' }),
      ).toBe(true);
      expect(wanted({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
      expect(wanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(
        false,
      );
      expect(wanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
      // A Zipkin endpoint selects no exporter (OTEL_TRACES_EXPORTER does): refused rather than silently off.
      expect(() => wanted({ OTEL_EXPORTER_ZIPKIN_ENDPOINT: 'http://127.0.0.1:9411/api/v2/spans' })).toThrow(
        /OTEL_EXPORTER_ZIPKIN_ENDPOINT: set OTEL_TRACES_EXPORTER=zipkin/,
      );
      expect(() => wanted({ OTEL_TRACES_EXPORTER: 'jaeger' })).toThrow(/OTEL_TRACES_EXPORTER/);
      // Empty counts as unset, as the OpenTelemetry spec says (compose passes `${OTEL_TRACES_EXPORTER:-}` and the like).
      const blank = {
        OTEL_TRACES_EXPORTER: '',
        OTEL_EXPORTER_OTLP_ENDPOINT: '',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
        OTEL_EXPORTER_ZIPKIN_ENDPOINT: '',
        OTEL_SERVICE_NAME: '',
        OTEL_SDK_DISABLED: '',
      };
      expect(wanted(blank)).toBe(false);
      expect(wanted({ ...blank, OTEL_TRACES_EXPORTER: 'zipkin' })).toBe(true);
    });

    // In a process of its own, as the API and worker start: their first import is the tracing start.
    const probe = async (env: Record<string, string>) => {
      const script = `
        require('./server/tracing-preload');
        const { tracingOn } = require('./lib/runtime/tracing');
        const loaded = Object.keys(require.cache).filter((k) => /@opentelemetry[\\\\/](sdk-trace|instrumentation|exporter)/.test(k));
        const { trace } = require('@opentelemetry/api');
        const { logger } = require('./lib/runtime/logger');
        logger.info({ where: 'outside' }, 'probe');
        trace.getTracer('probe').startActiveSpan('probe', (span) => { logger.info({ where: 'inside' }, 'probe'); span.end(); });
        console.log(JSON.stringify({ on: tracingOn(), loaded: loaded.length, provider: trace.getTracerProvider().constructor.name }));`;
      const stdout = await runScript(script, env);
      const lines = stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const logged = (where: string) => lines.find((l) => l.where === where)!;
      return {
        ...(lines.find((l) => 'on' in l) as { on: boolean; loaded: number; provider: string }),
        outside: logged('outside'),
        inside: logged('inside'),
      };
    };

    it('starts no SDK and loads none of its modules', async () => {
      const off = await probe({});
      expect(off).toMatchObject({ on: false, loaded: 0, provider: 'ProxyTracerProvider' });
      expect(off.inside).not.toHaveProperty('trace_id');
      // The same probe sees the SDK when the variables ask for it, and log lines in a span name it.
      const on = await probe({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
      expect(on.on).toBe(true);
      expect(on.loaded).toBeGreaterThan(0);
      expect(on.outside).not.toHaveProperty('trace_id');
      expect(on.inside).toMatchObject({
        trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
        span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      });
    }, 60_000);
  });
});
