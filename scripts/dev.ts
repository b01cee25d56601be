/**
 * `npm start`: the embedded stack for one machine. Data lives in .data/ (git-ignored) and
 * survives restarts: PostgreSQL files and the Temporal dev server's SQLite file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { embeddedDefaults } from './lib/embedded-defaults';
import { payloadKeyFile } from './lib/payload-key-file';
import { startStack } from './lib/stack';
import { stopProcess } from './lib/temporal-dev-server';
import { explainStartupFailure, startingPart, StartupError } from './lib/startup-error';
import { SERVICE_RUNTIME, type ServiceRuntime } from './lib/service-runtime';
import { untilReady } from './lib/until-ready';
import { promoteWhenVersioned } from './lib/version-routing';
import { buildIdOf } from '../lib/runtime/build-id';

const root = join(__dirname, '..');
const PORT = process.env.PORT ?? '3000';
const UI_PORT = Number(process.env.TEMPORAL_UI_PORT ?? 8233);

async function main(): Promise<void> {
  const defaults = embeddedDefaults(process.env);
  const dataDir = process.env.TRANCHE_DATA_DIR ?? join(root, '.data');
  const stack = await startStack({
    dataDir,
    database: 'tranche',
    persistent: true,
    temporalCli: process.env.TEMPORAL_CLI,
    pgPort: Number(process.env.EMBEDDED_PG_PORT ?? 5433),
    temporalPort: Number(process.env.TEMPORAL_PORT ?? 7233),
    uiPort: UI_PORT,
    uiCodecEndpoint: `http://localhost:${PORT}/console/codec`,
    command: 'npm start',
    ports: [
      { port: Number(PORT), part: 'the API', setting: 'PORT' },
      { port: Number(defaults.METRICS_PORT), part: "the API's metrics", setting: 'METRICS_PORT' },
      { port: Number(defaults.WORKER_METRICS_PORT), part: "the worker's metrics", setting: 'WORKER_METRICS_PORT' },
      {
        port: Number(defaults.TEMPORAL_METRICS_PORT),
        part: "the worker's Temporal SDK metrics",
        setting: 'TEMPORAL_METRICS_PORT',
      },
    ],
  });
  const env = {
    ...process.env,
    DATABASE_URL: stack.databaseUrl,
    // The services never hold the owner's URL (blank is unset, lib/runtime/config.ts).
    DATABASE_MIGRATION_URL: '',
    TEMPORAL_ADDRESS: stack.temporalAddress,
    PORT,
    ...defaults,
    // Histories in .data/ are sealed under a key kept beside them (lib/runtime/payload-codec.ts).
    ...(process.env.TEMPORAL_PAYLOAD_KEYS ? {} : { TEMPORAL_PAYLOAD_KEYS_FILE: payloadKeyFile(dataDir) }),
    // The worker polls as this checkout's version, made Current below (docs/decisions/0386-worker-deployment-versions.md).
    WORKER_VERSIONING: process.env.WORKER_VERSIONING ?? 'true',
    TRANCHE_BUILD_ID: buildIdOf({ TRANCHE_BUILD_ID: process.env.TRANCHE_BUILD_ID }) ?? '',
  };
  const children: ChildProcess[] = [];
  const run = (name: string, file: string, runtime: ServiceRuntime) => {
    const child = spawn(process.execPath, [...runtime.args, '--import', 'tsx', join(root, file)], {
      env: { ...env, ...runtime.env },
      stdio: 'inherit',
    });
    child.on('exit', (code, signal) => {
      if (stopping) return;
      console.error(
        explainStartupFailure(
          '[start]',
          new StartupError({
            part: `the ${name} (${file})`,
            problem: `it exited (${signal ?? `code ${code}`})${ready ? '' : ' before the API was ready'}`,
            remedy: `read its output above (lines it wrote just before exiting); everything else is being stopped`,
          }),
        ),
      );
      void stop(1);
    });
    children.push(child);
  };
  let ready = false;
  // The stack migrated as the owner; the worker and the API connect as the services' role (docs/decisions/0265).
  run('worker', 'worker/main.ts', SERVICE_RUNTIME.worker);
  run('api', 'server/main.ts', SERVICE_RUNTIME.api);

  let stopping = false;
  async function stop(code = 0): Promise<void> {
    if (stopping) return;
    stopping = true;
    console.log('\n[start] stopping worker, API, Temporal and PostgreSQL…');
    await Promise.all(children.map((c) => stopProcess(c)));
    await stack.stop();
    process.exit(code);
  }
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  try {
    // The URLs are printed only once the API answers /ready (PostgreSQL and Temporal reachable).
    const readyUrl = `http://127.0.0.1:${PORT}/ready`;
    await startingPart(
      {
        part: `the API (${readyUrl})`,
        remedy: `read the worker's and the API's output above; ${readyUrl} names the dependency it cannot reach`,
      },
      () => untilReady(readyUrl, { withinMs: 180_000 }),
    );
    await startingPart(
      {
        part: "making the worker's Worker Deployment version Current",
        remedy: "read the worker's output above; `npm run -s worker-version -- status` shows the deployment",
      },
      () => promoteWhenVersioned(stack.temporalAddress, env),
    );
  } catch (err) {
    if (stopping) return;
    console.error(explainStartupFailure('[start]', err));
    return stop(1);
  }
  ready = true;

  console.log(
    [
      '',
      'Tranche is up:',
      `  API             http://localhost:${PORT}   (health: /health, readiness: /ready)`,
      `  Temporal Web UI ${stack.temporalUiUrl ?? '(external cluster)'}`,
      `  Temporal gRPC   ${stack.temporalAddress}`,
      `  PostgreSQL      ${hidePassword(stack.databaseUrl)}   (the services' role)`,
      `                  ${hidePassword(stack.migrationUrl)}   (the owner: migrations, npm run -s api-key)`,
      `  Metrics         ${metricsUrl(defaults.METRICS_PORT)} (API), ${metricsUrl(defaults.WORKER_METRICS_PORT)} (worker),`,
      `                  ${metricsUrl(defaults.TEMPORAL_METRICS_PORT)} (worker's Temporal SDK)`,
      'Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );
}

const hidePassword = (url: string) => url.replace(/:[^:@/]+@/, ':***@');
const metricsUrl = (port: string | undefined) => `http://localhost:${port}/metrics`;

main().catch((err) => {
  console.error(explainStartupFailure('[start]', err));
  process.exit(1);
});
