import { randomInt } from 'node:crypto';
import { Client } from 'pg';
import { logger } from '../../lib/runtime/logger';
import { QUEUE_CHANNEL } from '../events/publish';

/** The advisory-lock class a live dispatcher holds its own key in (its liveness, for the sweep). */
export const LIVENESS_LOCK_CLASS = 7_461_219;
/**
 * The class a dispatcher's worker holds its key in once it has warmed up (worker/warm-up.ts): an
 * API's /ready waits until one is held in its database (docs/decisions/0302-warm-before-ready.md).
 */
export const WARM_LOCK_CLASS = 7_461_220;

export interface Listener {
  /** `dispatcher:<key>`: the owner of the attempts this process claims; live while its lock is held. */
  readonly owner: string;
  /** Takes the warm lock (WARM_LOCK_CLASS) on this session, and again after every reconnect. */
  markWarm(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The dispatcher's own PostgreSQL session: LISTENs on the queue's channel, so a
 * publishing transaction wakes every dispatcher at commit with no poll in between, and holds the
 * process's liveness lock, so the sweep can tell a dead dispatcher's attempts from a live one's.
 * The connection is re-made after any failure (1 s to 10 s apart); the same key is taken again and
 * `onWake` runs at once, since notifications sent meanwhile are gone.
 */
export async function startListener(opts: {
  databaseUrl: string;
  onWake: (payload: string) => void;
}): Promise<Listener> {
  let key = randomInt(1, 2 ** 31 - 1);
  let client: Client | undefined;
  let stopped = false;
  let backoff = 1000;
  let timer: NodeJS.Timeout | undefined;
  let warm = false;
  const takeWarmLock = (c: Client) => c.query('select pg_advisory_lock($1, $2)', [WARM_LOCK_CLASS, key]);

  async function connect(): Promise<void> {
    const c = new Client({ connectionString: opts.databaseUrl, connectionTimeoutMillis: 5000, keepAlive: true });
    c.on('notification', (n) => opts.onWake(n.payload ?? ''));
    c.on('error', (err) => {
      logger.warn({ err: err.message }, 'dispatcher listener lost its connection; reconnecting');
      void c.end().catch(() => undefined);
      reconnect();
    });
    await c.connect();
    try {
      // Another process holding the same key (1 in 2^31) would block us: take a fresh one instead.
      for (;;) {
        const { rows } = await c.query<{ ok: boolean }>('select pg_try_advisory_lock($1, $2) as ok', [
          LIVENESS_LOCK_CLASS,
          key,
        ]);
        if (rows[0]!.ok) break;
        key = randomInt(1, 2 ** 31 - 1);
      }
      await c.query(`listen ${QUEUE_CHANNEL}`);
      if (warm) await takeWarmLock(c);
    } catch (err) {
      await c.end().catch(() => undefined);
      throw err;
    }
    client = c;
    backoff = 1000;
  }

  function reconnect(): void {
    client = undefined;
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      connect().then(
        () => opts.onWake(''),
        (err: Error) => {
          logger.warn({ err: err.message }, 'dispatcher listener could not reconnect; retrying');
          backoff = Math.min(backoff * 2, 10_000);
          reconnect();
        },
      );
    }, backoff);
  }

  await connect();
  return {
    get owner() {
      return `dispatcher:${key}`;
    },
    async markWarm() {
      warm = true;
      if (client) await takeWarmLock(client);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}
