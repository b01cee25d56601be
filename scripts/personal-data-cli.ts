/**
 * `npm run -s personal-data -- <command>`, straight to DATABASE_URL with the service's own configuration
 * (production unless NODE_ENV says otherwise; against npm start's database run it with NODE_ENV=development):
 *
 * - `reseal [--batch N]`: seals every personal field written in clear before fields were sealed at the
 *   door, under its investor's key (the erased marker for an investor already erased): subscriptions (a
 *   running workflow is sent the sealed values, so Temporal must be reachable and a worker running),
 *   subscription events and their delivery bodies, documents' file names
 *   (docs/decisions/0384-resealing-fields-written-in-clear.md). Safe to run twice and while the service
 *   runs. Exit 0 when nothing is left in clear, 1 when something is (it says what; run it again).
 * - `rewrap [--batch N]`: after a new key was put first in PERSONAL_DATA_KEYS, re-wraps every investor's
 *   data key under it, so the older keys can leave the list (docs/decisions/0383-personal-data-keys-rewrapped.md).
 *
 * Exit 2 on a usage error.
 */
import { openOrm } from '../db/orm';
import { rewrapPersonalKeys } from '../db/personal-keys';
import { endResealPass } from '../db/personal-reseal';
import { loadConfig } from '../lib/runtime/config';
import { connectClient } from '../lib/runtime/temporal';
import { resealPersonalData } from '../server';

const USAGE = 'usage: npm run -s personal-data -- reseal|rewrap [--batch N]';

async function main(): Promise<number> {
  const [command, ...rest] = process.argv.slice(2);
  const at = rest.indexOf('--batch');
  const batch = at >= 0 ? Number(rest[at + 1]) : 500;
  if ((command !== 'reseal' && command !== 'rewrap') || !Number.isInteger(batch) || batch < 1) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig();
  const orm = await openOrm(config);
  try {
    const knex = orm.em.getConnection().getKnex();
    if (command === 'rewrap') {
      const { rewrapped, current } = await rewrapPersonalKeys(knex, config.PERSONAL_DATA_KEYS ?? [], batch);
      console.log(
        `rewrapped ${rewrapped} investor data key(s) under "${config.PERSONAL_DATA_KEYS![0]!.id}"; ${current} already were`,
      );
      return 0;
    }
    const temporal = await connectClient(config);
    try {
      const report = await resealPersonalData({ orm, temporal, config }, { batch });
      await endResealPass(knex, { finished: report.unreached.length === 0, report });
      for (const p of report.sealed) console.log(`sealed ${p.count} in ${p.place}`);
      for (const p of report.unreached) console.error(`still in clear: ${p.count} in ${p.place}`);
      if (report.unreached.length === 0) console.log('nothing personal is left in clear');
      return report.unreached.length === 0 ? 0 : 1;
    } finally {
      await temporal.connection.close();
    }
  } finally {
    await orm.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`personal-data failed: ${err.message}`);
    process.exit(2);
  },
);
