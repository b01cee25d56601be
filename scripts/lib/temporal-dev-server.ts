import { spawn, type ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_TYPES } from '../../domain/search-attributes';

export interface RunningTemporal {
  address: string;
  uiUrl: string | null;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * `temporal server start-dev` from the pinned CLI (scripts/tools.sh): SQLite in WAL mode when a
 * file is given (durable timers survive a restart), in memory otherwise; the search attributes
 * operators filter by are registered at start.
 */
export async function startTemporalDevServer(opts: {
  binary: string;
  port: number;
  uiPort?: number;
  /** The codec server the Web UI asks to open sealed payloads (api/codec/router.ts). */
  uiCodecEndpoint?: string;
  dbFile?: string;
  logFile?: NodeJS.WritableStream;
}): Promise<RunningTemporal> {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(opts.port),
    '--log-level',
    'warn',
    '--namespace',
    'default',
  ];
  args.push(...(opts.uiPort ? ['--ui-port', String(opts.uiPort)] : ['--headless']));
  if (opts.uiPort && opts.uiCodecEndpoint) args.push('--ui-codec-endpoint', opts.uiCodecEndpoint);
  if (opts.dbFile) {
    args.push(
      '--db-filename',
      opts.dbFile,
      '--sqlite-pragma',
      'journal_mode=WAL',
      '--sqlite-pragma',
      'synchronous=NORMAL',
    );
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_TYPES)) args.push('--search-attribute', `${name}=${type}`);
  for (const kv of [
    'frontend.rps=20000',
    'frontend.namespaceRPS=20000',
    'history.rps=20000',
    'matching.rps=20000',
    'matching.numTaskqueueReadPartitions=1',
    'matching.numTaskqueueWritePartitions=1',
    // A task queue reader loads at most 20 times a second by default: up to 50 ms on every hop.
    'history.transferProcessorMaxPollRPS=1000',
    'history.timerProcessorMaxPollRPS=1000',
    // A batch's activity goes straight back to the worker that scheduled it, skipping matching.
    'system.enableActivityEagerExecution=true',
    // A delivery workflow the worker's engine starts takes its first task in the start's answer
    // (docs/decisions/0331-eager-delivery-starts.md).
    'system.enableEagerWorkflowStart=true',
    // Each fairness key (a delivery's organisation) is handed out in turn, not first come first
    // served (docs/decisions/0325-workflow-shape-fairness-keys.md); it implies the priority matcher.
    'matching.enableFairness=true',
    // The CLI turns this on so that a search attribute created while the server runs is seen at once. Ours
    // are all registered at start (`--search-attribute` above): with it on, every workflow start, search
    // attribute upsert and visibility write read the cluster metadata and the namespace from SQLite again,
    // the namespace under one server-wide lock (docs/decisions/0352-dev-server-search-attribute-cache.md).
    'system.forceSearchAttributesCacheRefreshOnRead=false',
    // Visibility's reader loads twice a second (20 times by default), up to 500 tasks a load: a workflow that
    // has closed by its load writes only its close row, not a start row too, one write fewer on SQLite's one
    // connection for most deliveries; the Web UI's lists run up to half a second behind
    // (docs/decisions/0355-visibility-read-twice-a-second.md).
    'history.visibilityProcessorMaxPollRPS=2',
    'history.visibilityTaskBatchSize=500',
    // The visibility queue forgets the tasks it has finished once a second (every 30 s by default): until then
    // each new task walks them all, which after a busy minute took up to 17% of the server's CPU
    // (docs/decisions/0356-visibility-checkpoint-every-second.md).
    'history.visibilityProcessorUpdateAckInterval="1s"',
  ]) {
    args.push('--dynamic-config-value', kv);
  }
  const child = spawn(opts.binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  if (opts.logFile) {
    child.stdout!.pipe(opts.logFile);
    child.stderr!.pipe(opts.logFile);
  } else {
    child.stdout!.resume();
    child.stderr!.resume();
  }
  const address = `127.0.0.1:${opts.port}`;
  await waitUntilServing(address, child);
  return {
    address,
    uiUrl: opts.uiPort ? `http://localhost:${opts.uiPort}` : null,
    process: child,
    stop: () => stopProcess(child),
  };
}

async function waitUntilServing(address: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  let exited = false;
  let failed: Error | null = null;
  child.once('exit', () => (exited = true));
  // A binary that is missing or not executable: spawn reports it here, not by exiting.
  child.once('error', (err) => (failed = err));
  while (Date.now() < deadline) {
    if (failed) throw new Error(`the Temporal CLI could not be run: ${(failed as Error).message}`);
    if (exited)
      throw new Error(`temporal dev server exited during start (${child.signalCode ?? `code ${child.exitCode}`})`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: '1s' });
      try {
        await connection.workflowService.describeNamespace({ namespace: 'default' });
        return;
      } finally {
        await connection.close();
      }
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  child.kill('SIGKILL');
  throw new Error('temporal dev server did not start within 60 s');
}

export function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
