import { endResealPass, leasePendingReseal } from '../../db/personal-reseal';
import { logger } from '../../lib/runtime/logger';
import { resealPersonalData, type ResealDeps } from './reseal';

/** Long enough for a whole pass over a large install; a pass that outlasts it is repeated safely beside another. */
const LEASE_SECONDS = 15 * 60;

/**
 * The reseal migration 0096 asks for on an existing install (docs/decisions/0384-resealing-fields-written-in-clear.md):
 * run once by the first API process to be warm (a worker answers, so running workflows can be sent their
 * sealed values), under a lease so the others leave it. Finished when nothing is left in clear; otherwise
 * pending again for the next start, or for `npm run personal-data -- reseal`, and said in the log.
 * Answers whether this process ran a pass.
 */
export async function runPendingReseal(deps: ResealDeps): Promise<boolean> {
  const knex = deps.orm.em.getConnection().getKnex();
  if (!(await leasePendingReseal(knex, LEASE_SECONDS))) return false;
  try {
    const report = await resealPersonalData(deps);
    await endResealPass(knex, { finished: report.unreached.length === 0, report });
    if (report.unreached.length === 0)
      logger.info({ sealed: report.sealed }, 'personal fields written in clear are sealed');
    else
      logger.warn(
        { sealed: report.sealed, unreached: report.unreached },
        'personal fields written in clear are left: run `npm run personal-data -- reseal` once workers answer',
      );
  } catch (err) {
    await endResealPass(knex, { finished: false, report: { error: (err as Error).message } }).catch(() => undefined);
    logger.error({ err }, 'the reseal of personal fields written in clear failed; it runs again at the next start');
  }
  return true;
}
