import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { stopProcess } from './temporal-dev-server';

export interface RunningJaeger {
  /** The UI and its query API (/api/traces, /api/services). */
  uiUrl: string;
  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to for the processes that export to it. */
  otlpEndpoint: string;
  stop(): Promise<void>;
}

/**
 * Jaeger v2 (scripts/tools.sh jaeger) with deploy/jaeger/config.yaml: OTLP over HTTP in, traces in
 * memory, the query API and UI out, on the ports given. Resolves once the query API answers.
 */
export async function startJaeger(opts: {
  binary: string;
  uiPort: number;
  otlpHttpPort: number;
  queryGrpcPort: number;
  output: NodeJS.WritableStream;
  /** A built Jaeger UI (its index.html's folder), served instead of the binary's own page. */
  uiAssets?: string;
}): Promise<RunningJaeger> {
  const config = join(__dirname, '..', '..', 'deploy', 'jaeger', 'config.yaml');
  const child = spawn(opts.binary, ['--config', config], {
    env: {
      ...process.env,
      JAEGER_UI_PORT: String(opts.uiPort),
      JAEGER_OTLP_HTTP_PORT: String(opts.otlpHttpPort),
      JAEGER_QUERY_GRPC_PORT: String(opts.queryGrpcPort),
      JAEGER_UI_ASSETS: opts.uiAssets ?? '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Never leave it behind, whatever ends this process.
  process.once('exit', () => child.kill());
  child.stdout!.pipe(opts.output, { end: false });
  child.stderr!.pipe(opts.output, { end: false });
  const uiUrl = `http://127.0.0.1:${opts.uiPort}`;
  const deadline = Date.now() + 60_000;
  let failed: Error | null = null;
  child.once('error', (err) => (failed = err));
  for (;;) {
    if (failed) throw new Error(`jaeger could not be run: ${(failed as Error).message}`);
    if (child.exitCode !== null) throw new Error(`jaeger exited during start (code ${child.exitCode})`);
    const up = await fetch(`${uiUrl}/api/services`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error(`jaeger did not answer ${uiUrl}/api/services within 60 s`);
    await new Promise((r) => setTimeout(r, 300));
  }
  return { uiUrl, otlpEndpoint: `http://127.0.0.1:${opts.otlpHttpPort}`, stop: () => stopProcess(child) };
}
