import { randomBytes } from 'node:crypto';
import { freePort } from '../../scripts/lib/free-port';
import { spawnEntryPoint, type EntryPoint } from '../support/entry-point';
import { freshDatabase } from '../support/service';
import { hostAndPort, TcpRelay } from '../support/tcp-relay';
import { until } from '../support/wait';

/**
 * A process started before its PostgreSQL or Temporal answers waits for them, up to
 * STARTUP_WAIT_SECONDS, instead of exiting; a refusal still fails at once, and silence past the wait
 * fails naming what stayed silent (docs/decisions/0338-dependencies-awaited-at-start.md).
 */
describe('dependencies awaited at start', () => {
  const started: EntryPoint[] = [];
  const relays: TcpRelay[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((entry) => entry.stop()));
    await Promise.all(relays.splice(0).map((relay) => relay.close()));
  });

  const start = (file: string, env: Record<string, string>) => {
    const entry = spawnEntryPoint(file, env);
    started.push(entry);
    return entry;
  };
  /** A relay to `address` on a free port, not listening until the test opens it. */
  const relayTo = async (address: string) => {
    const relay = new TcpRelay(await freePort(), hostAndPort(address));
    relays.push(relay);
    return relay;
  };
  const serviceEnv = async (overrides: Record<string, string>): Promise<Record<string, string>> => ({
    ...(process.env as Record<string, string>),
    LOG_LEVEL: 'warn',
    DATABASE_URL: await freshDatabase(),
    PORT: String(await freePort()),
    TEMPORAL_TASK_QUEUE: `late-${randomBytes(4).toString('hex')}`,
    ...overrides,
  });
  const withPort = (url: string, port: number) =>
    Object.assign(new URL(url), { hostname: '127.0.0.1', port }).toString();

  it('an API and a worker started before PostgreSQL and Temporal come up with them, and serve', async () => {
    const direct = await serviceEnv({});
    const database = await relayTo(direct.DATABASE_URL!);
    const temporal = await relayTo(process.env.TEMPORAL_ADDRESS!);
    const env: Record<string, string> = {
      ...direct,
      DATABASE_URL: withPort(direct.DATABASE_URL!, database.port),
      TEMPORAL_ADDRESS: `127.0.0.1:${temporal.port}`,
      STARTUP_WAIT_SECONDS: '120',
    };
    const api = start('server/main.ts', env);
    const worker = start('worker/main.ts', env);
    const both = () => `--- api\n${api.output()}\n--- worker\n${worker.output()}`;
    const withOutput = (err: Error) => {
      throw new Error(`${err.message}\n${both()}`);
    };

    await until(
      'both to say they wait for PostgreSQL',
      () => [api, worker].every((p) => /waiting for PostgreSQL at 127\.0\.0\.1:\d+\/t_/.test(p.output())),
      { timeoutMs: 60_000, intervalMs: 200 },
    ).catch(withOutput);
    await database.open();
    await until(
      'both to say they wait for Temporal',
      () => [api, worker].every((p) => p.output().includes(`waiting for Temporal at 127.0.0.1:${temporal.port}`)),
      { timeoutMs: 60_000, intervalMs: 200 },
    ).catch(withOutput);
    expect(both()).not.toContain(new URL(env.DATABASE_URL!).password); // the URL's password is never printed
    await temporal.open();

    let ready = null as Response | null;
    await until(
      'the API to be ready, or a process to exit',
      async () =>
        (ready = await fetch(`http://127.0.0.1:${env.PORT!}/ready`).catch(() => null))?.ok ||
        api.child.exitCode !== null ||
        worker.child.exitCode !== null,
      { timeoutMs: 90_000, intervalMs: 300 },
    ).catch(() => undefined);
    expect({ status: ready?.status, output: both() }).toMatchObject({ status: 200 });
    expect(((await ready!.json()) as { data: unknown }).data).toMatchObject({ database: 'ok', temporal: 'ok' });
  }, 240_000);

  it.each(['server/main.ts', 'worker/main.ts'])(
    '%s exits once the wait is over, naming what stayed silent and the setting',
    async (file) => {
      const silent = await relayTo(process.env.TEMPORAL_ADDRESS!); // never opened
      const entry = start(
        file,
        await serviceEnv({ TEMPORAL_ADDRESS: `127.0.0.1:${silent.port}`, STARTUP_WAIT_SECONDS: '2' }),
      );
      expect(await entry.exited).toBe(1);
      expect(entry.output()).toContain(
        `Temporal at 127.0.0.1:${silent.port} did not answer within 2 s (STARTUP_WAIT_SECONDS)`,
      );
    },
    60_000,
  );

  it('a refusal is not waited out: a wrong password fails at once, however long the wait', async () => {
    const env = await serviceEnv({ STARTUP_WAIT_SECONDS: '600' });
    const wrong = Object.assign(new URL(env.DATABASE_URL!), { password: 'not-the-password' }).toString();
    const entry = start('server/main.ts', { ...env, DATABASE_URL: wrong });
    const code = await Promise.race([
      entry.exited,
      new Promise((r) => setTimeout(() => r('still waiting'), 45_000).unref()),
    ]);
    expect({ code, output: entry.output() }).toMatchObject({ code: 1 });
    expect(entry.output()).toMatch(/password authentication failed/);
    expect(entry.output()).not.toMatch(/waiting for PostgreSQL|not-the-password/);
  }, 90_000);
});
