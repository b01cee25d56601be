import { randomUUID } from 'node:crypto';
import type { Knex } from '@mikro-orm/postgresql';
import { request } from 'undici';
import { logger } from '../../lib/runtime/logger';
import { recordWarmUp } from '../../lib/runtime/metrics';
import { WARM_LOCK_CLASS, warmAimedPublish } from '../../webhooks';
import type { ApiDeps } from '../deps';
import { WARM_PARTS, type WarmPart, type Warmth } from '../warmth';

/** Pool connections opened and prepared at once: the test operation's requests in flight side by side. */
const WARM_CONNECTIONS = 4;
/** Requests sent through the API's own port, in lanes, so its middleware and handlers are compiled before the first client's. */
const WARM_REQUESTS = 40;
const WARM_LANES = 4;
/** How often the last part looks for a warm worker. */
const WORKER_POLL_MS = 100;
const STEP_TIMEOUT_MS = 10_000;

/**
 * An API's start-up warm-up (docs/decisions/0302-warm-before-ready.md), run once it listens: opens
 * pool connections, prepares the publish statement on each, reaches Temporal, sends test pings for
 * an endpoint that does not exist through its own port (auth, the write limit, validation, the
 * publish statement: all run, nothing is stored), then waits until a worker in this database is
 * warm (it holds the warm lock, worker/warm-up.ts). /ready answers 200 only after the last part.
 * A part that fails is tried again, 1 s to 10 s apart.
 */
export async function warmApi(deps: ApiDeps, warmth: Warmth, baseUrl: string): Promise<void> {
  const knex = deps.orm.em.getConnection().getKnex();
  const steps: Record<WarmPart, () => Promise<unknown>> = {
    database_pool: () => Promise.all(Array.from({ length: WARM_CONNECTIONS }, () => knex.raw('select pg_sleep(0.05)'))),
    publish_statement: () => warmAimedPublish(knex, deps.config.BEHAVIOUR_SET, WARM_CONNECTIONS),
    temporal: () => deps.temporal.connection.workflowService.getSystemInfo({}),
    request_path: async () => {
      const token = await deps.tokens.sign({
        userId: 'warm-up',
        orgId: randomUUID(),
        roles: ['staff'],
        kycCompleted: false,
      });
      const url = `${baseUrl}/notifications/webhook-endpoints/${randomUUID()}/test`;
      let next = 0;
      await Promise.all(
        Array.from({ length: WARM_LANES }, async () => {
          while (next++ < WARM_REQUESTS) {
            const res = await request(url, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}` },
              headersTimeout: STEP_TIMEOUT_MS,
              bodyTimeout: STEP_TIMEOUT_MS,
            });
            await res.body.dump();
            // The endpoint does not exist: anything but 404 means the path did not run as a client's would.
            if (res.statusCode !== 404) throw new Error(`warm-up test ping answered ${res.statusCode}`);
          }
        }),
      );
    },
    worker: async () => {
      while (!(await warmWorkerSeen(knex))) await new Promise((r) => setTimeout(r, WORKER_POLL_MS));
    },
  };
  for (const part of WARM_PARTS) {
    let backoff = 1000;
    for (;;) {
      const t0 = performance.now();
      try {
        await steps[part]();
        const ms = Math.round((performance.now() - t0) * 10) / 10;
        recordWarmUp(part, ms / 1000);
        warmth.warmed.push(part);
        logger.info({ part, ms }, 'api warm-up part done');
        break;
      } catch (err) {
        logger.warn({ err, part }, 'api warm-up part failed; trying again');
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 10_000);
      }
    }
  }
}

/** Whether a worker's dispatcher holds the warm lock in this database. */
async function warmWorkerSeen(knex: Knex): Promise<boolean> {
  const { rows } = await knex.raw<{ rows: { warm: boolean }[] }>(
    `select exists (select 1 from pg_locks l join pg_database d on d.oid = l.database
                     where l.locktype = 'advisory' and l.classid = ? and l.objsubid = 2 and l.granted
                       and d.datname = current_database()) as warm`,
    [WARM_LOCK_CLASS],
  );
  return rows[0]!.warm;
}
