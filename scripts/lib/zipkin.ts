import { spawn } from 'node:child_process';
import { stopProcess } from './temporal-dev-server';

export interface RunningZipkin {
  /** Its HTTP API (/api/v2/trace/<id>, /health); the UI is under /zipkin/. */
  url: string;
  /** The Lens UI, what people open. */
  uiUrl: string;
  /** What OTEL_EXPORTER_ZIPKIN_ENDPOINT is set to for the processes that export to it. */
  spansEndpoint: string;
  stop(): Promise<void>;
}

/**
 * Zipkin (scripts/tools.sh zipkin: zipkin-server's exec jar, its UI inside) on `port`, loopback
 * only, spans kept in memory (at most `maxSpans`, the oldest traces dropped first). Takes spans on
 * /api/v2/spans, serves them on /api/v2/trace/<id> and the UI on /zipkin/. Resolves once /health
 * answers UP. Its own options are Zipkin's environment variables (STORAGE_TYPE and the rest) and
 * JAVA_OPTS; a shutdown runs on SIGTERM and SIGINT alike, so Ctrl-C of `npm run cluster` ends it.
 */
export async function startZipkin(opts: {
  jar: string;
  port: number;
  output: NodeJS.WritableStream;
  /** Zipkin's own default is 500000, with -Xmx600m (its docs: about 1 KB a span plus 100 MB). */
  maxSpans?: number;
}): Promise<RunningZipkin> {
  const maxSpans = opts.maxSpans ?? 100_000;
  const heapMb = Math.ceil(maxSpans / 1000) + 128;
  const java = process.env.JAVA_HOME ? `${process.env.JAVA_HOME}/bin/java` : 'java';
  const child = spawn(
    java,
    [
      // Starts in seconds on a small machine: no C2 compiler, one GC thread, the class data share.
      '-Xshare:auto',
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      `-Xmx${heapMb}m`,
      '-XX:+ExitOnOutOfMemoryError',
      ...(process.env.JAVA_OPTS ? process.env.JAVA_OPTS.split(/\s+/).filter(Boolean) : []),
      '-jar',
      opts.jar,
      // Spring Boot replaces a list as a whole: the port entry is given complete.
      `--armeria.ports[0].ip=127.0.0.1`,
      `--armeria.ports[0].port=${opts.port}`,
      '--armeria.ports[0].protocols[0]=http',
      `--zipkin.storage.mem.max-spans=${maxSpans}`,
      '--logging.level.root=WARN',
      '--spring.main.banner-mode=off',
    ],
    {
      env: { ...process.env, STORAGE_TYPE: process.env.STORAGE_TYPE ?? 'mem' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // Never leave the JVM behind, whatever ends this process.
  process.once('exit', () => child.kill());
  child.stdout!.pipe(opts.output, { end: false });
  child.stderr!.pipe(opts.output, { end: false });
  const url = `http://127.0.0.1:${opts.port}`;
  const deadline = Date.now() + 120_000;
  let failed: Error | null = null;
  child.once('error', (err) => (failed = err));
  for (;;) {
    if (failed) throw new Error(`java could not be run for Zipkin: ${(failed as Error).message}`);
    if (child.exitCode !== null) throw new Error(`zipkin exited during start (code ${child.exitCode})`);
    const up = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) }).then(
      async (r) => r.ok && ((await r.json()) as { status?: string }).status === 'UP',
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      await stopProcess(child);
      throw new Error(`zipkin did not answer ${url}/health with UP within 120 s`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return {
    url,
    uiUrl: `http://localhost:${opts.port}/zipkin/`,
    spansEndpoint: `${url}/api/v2/spans`,
    stop: () => stopProcess(child),
  };
}
