import { startingPart } from './startup-error';
import { startZipkin } from './zipkin';

/** Variables that already say where traces go: the cluster then leaves them be, and Zipkin runs unused. */
const OWN_EXPORT = [
  'OTEL_TRACES_EXPORTER',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_ZIPKIN_ENDPOINT',
];

/**
 * Zipkin on its one port (spans in, API and UI out), and the environment that points the workers'
 * and API instances' exporters at it, unless the environment already names an exporter of its own.
 */
export async function startClusterTraces(o: {
  zipkin: { jar: string; port: number };
  output: NodeJS.WritableStream;
  log: string;
}): Promise<{ uiUrl: string; env: Record<string, string>; stop(): Promise<void> }> {
  const zipkin = await startingPart(
    {
      part: `Zipkin (port ${o.zipkin.port})`,
      remedy: 'read its lines in the log; it needs Java 17 or later on PATH (or JAVA_HOME)',
      log: o.log,
    },
    () => startZipkin({ ...o.zipkin, output: o.output }),
  );
  const env: Record<string, string> = OWN_EXPORT.some((name) => process.env[name])
    ? {}
    : { OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_ZIPKIN_ENDPOINT: zipkin.spansEndpoint };
  return { uiUrl: zipkin.uiUrl, env, stop: zipkin.stop };
}
