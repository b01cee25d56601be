import { runScript } from './support/traced-process';

/** Traces: a caller's trace is linked, not continued, unless the caller is trusted. */
describe('traces', () => {
  describe('trusting nobody by default (docs/decisions/0262-traces-trust-nobody.md)', () => {
    // A traced process of its own: a plain http server after the tracing start, one request to it
    // with a caller's traceparent, baggage and a query string; the handler reports its span.
    const serve = async (env: Record<string, string>) => {
      const script = `
        require('./server/tracing-preload');
        const { trace, propagation, context } = require('@opentelemetry/api');
        const http = require('node:http');
        const server = http.createServer((req, res) => {
          const span = trace.getActiveSpan();
          res.end(JSON.stringify({ traceId: span.spanContext().traceId, attributes: span.attributes, links: span.links, headers: req.headers }));
        });
        server.listen(0, '127.0.0.1', async () => {
          const res = await fetch('http://127.0.0.1:' + server.address().port + '/sandbox/checkout/cs_secret_session/pay?code=secret-code', {
            headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00', baggage: 'user=alice' },
          });
          const carrier = {};
          propagation.inject(propagation.setBaggage(context.active(), propagation.createBaggage({ k: { value: 'v' } })), carrier);
          console.log(JSON.stringify({ span: JSON.parse(await res.text()), injected: Object.keys(carrier) }));
          server.close();
        });`;
      const stdout = await runScript(script, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', ...env });
      const line = stdout
        .trim()
        .split('\n')
        .find((l) => l.includes('"injected"'))!;
      return JSON.parse(line) as {
        span: {
          traceId: string;
          attributes: Record<string, unknown>;
          links: unknown[];
          headers: Record<string, string>;
        };
        injected: string[];
      };
    };

    it("starts a trace of its own for an untrusted caller, links the caller's, keeps no query or capability, forwards no baggage", async () => {
      const { span, injected } = await serve({});
      expect(span.traceId).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736'); // a -00 could not un-sample it
      expect(span.links).toHaveLength(1);
      expect(span.attributes['trace.caller_traceparent']).toBe(
        '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00',
      );
      const text = JSON.stringify(span.attributes);
      expect(text).not.toMatch(/secret-code|cs_secret_session|\?/);
      expect(span.attributes['http.target']).toBe('/sandbox/checkout/:session_id/pay');
      expect(span.headers.baggage).toBeUndefined();
      expect(injected).not.toContain('baggage'); // no baggage header on any outgoing request
    }, 60_000);

    it('continues the trace of a caller in TRACE_TRUSTED_CALLERS', async () => {
      const { span } = await serve({ TRACE_TRUSTED_CALLERS: '127.0.0.0/8' });
      expect(span.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
      // Its -00 is honoured: the span is not recorded (no attributes, no links).
      expect(span.attributes).toBeUndefined();
    }, 60_000);
  });
});
