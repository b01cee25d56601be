import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../scripts/lib/embedded-postgres';
import { freePort } from '../../scripts/lib/free-port';
import { stopProcess } from '../../scripts/lib/temporal-dev-server';
import { jsonClient, type ClientTarget } from './client-target';
import type { Sink } from './sink';

/**
 * The Svix peer (../shared/peers/svix/README.md), started fresh for each of its runs in the client comparison:
 * its server built by the peer's build.sh (SVIX_SERVER names another binary), with its memory queue and cache,
 * on a PostgreSQL of its own started as Tranche's embedded one is (the same binaries and flags: fsync and
 * synchronous_commit off), at the bench's priority like the trees it is compared with.
 */
export const svixBinary = () =>
  process.env.SVIX_SERVER ?? join(homedir(), 'svix-build/src/server/target/release/svix-server');

export const svixPresent = () => existsSync(svixBinary());

export async function startSvix(logFile: string) {
  const binary = svixBinary();
  const dir = mkdtempSync(join(tmpdir(), 'tranche-bench-svix-'));
  chmodSync(dir, 0o755); // run as root, the embedded PostgreSQL runs as the postgres user
  const pg = await startEmbeddedPostgres({
    dir: join(dir, 'postgres'),
    port: await freePort(),
    persistent: false,
    logFile: join(dir, 'postgres.log'),
  });
  await pg.createDatabase('svix');
  const port = await freePort();
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: homedir(),
    SVIX_JWT_SECRET: 'bench-secret-not-real',
    SVIX_DB_DSN: pg.url('svix'),
    SVIX_QUEUE_TYPE: 'memory',
    SVIX_CACHE_TYPE: 'memory',
    // Its endpoints are the bench's loopback sink.
    SVIX_WHITELIST_SUBNETS: '[127.0.0.1/32]',
    SVIX_LISTEN_ADDRESS: `127.0.0.1:${port}`,
    SVIX_LOG_LEVEL: 'info',
  };
  const out = openSync(logFile, 'a');
  let child: ReturnType<typeof spawn> | undefined;
  const stop = async () => {
    if (child) await stopProcess(child);
    await pg.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    execFileSync(binary, ['migrate'], { env, timeout: 120_000, stdio: ['ignore', out, out] });
    const generated = execFileSync(binary, ['jwt', 'generate'], { env, timeout: 30_000, encoding: 'utf8' });
    const token = /eyJ[\w-]+\.[\w-]+\.[\w-]+/.exec(generated)?.[0];
    if (!token) throw new Error(`svix-server jwt generate printed no token: ${generated.slice(0, 200)}`);
    child = spawn(binary, [], { env, stdio: ['ignore', out, out] });
    const baseUrl = `http://127.0.0.1:${port}`;
    for (const deadline = Date.now() + 60_000; ;) {
      const up = await fetch(`${baseUrl}/api/v1/health/`, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`svix-server did not answer /api/v1/health/ (see ${logFile})`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const postmaster = Number(readFileSync(join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
    return { baseUrl, token, pids: [child.pid!, postmaster], stop };
  } catch (err) {
    await stop();
    throw err;
  } finally {
    closeSync(out);
  }
}

/**
 * Svix through its own API, in the client target's shape: an organisation is an application, an endpoint
 * takes a whsec_ secret the sink verifies (`/svix/<hook>`), a message is `POST /api/v1/app/{app}/msg/` with
 * a test ping's body, and the sink knows it by its `svix-id`.
 */
export function svixTarget(baseUrl: string, token: string, sink: Sink): ClientTarget {
  const http = jsonClient(baseUrl);
  const auth = { authorization: `Bearer ${token}` };
  return {
    system: 'svix',
    async org() {
      const uid = `bench-${randomUUID()}`;
      const app = String((await http.call('POST', '/api/v1/app/', { name: uid, uid }, auth)).json.id);
      return {
        id: app,
        async endpoint(kind) {
          const hook = randomUUID();
          const secret = `whsec_${randomBytes(24).toString('base64')}`;
          const url = `${sink.url}/${kind === 'h' ? 'svix' : 'hang'}/${hook}`;
          const created = await http.call('POST', `/api/v1/app/${app}/endpoint/`, { url, version: 1, secret }, auth);
          await sink.register(hook, secret, app);
          return String(created.json.id);
        },
        async publish(endpointId) {
          const payload = {
            type: 'test.ping',
            data: { endpoint_id: endpointId, message: 'This is a test event sent from the webhook settings.' },
          };
          const res = await http.call(
            'POST',
            `/api/v1/app/${app}/msg/`,
            { eventType: 'test.ping', payload },
            {
              ...auth,
              'idempotency-key': randomUUID(),
            },
          );
          return { eventId: String(res.json.id), serverTiming: null };
        },
        async disable(endpointId) {
          await http.call('PATCH', `/api/v1/app/${app}/endpoint/${endpointId}/`, { disabled: true }, auth);
        },
      };
    },
    close: () => http.close(),
  };
}
