/**
 * `npm run -s webhook-secrets -- reseal`: after a new key was put first in WEBHOOK_SECRET_KEYS,
 * re-seals every endpoint's signing secret (and the one a rotation replaced, during its overlap)
 * still sealed under another key, so the old key can then leave the keyring (after
 * IDEMPOTENCY_KEY_TTL_HOURS, which kept answers sealed under it need). Straight to DATABASE_URL; safe to run twice and while the service runs (each
 * row is updated only if it still holds the value read).
 */
import { secretBoxFrom, type SecretBox } from '../webhooks';
import { openOrm, type Orm } from '../db/orm';
import { loadConfig } from '../lib/config';

export async function resealWebhookSecrets(orm: Orm, box: SecretBox): Promise<{ resealed: number; current: number }> {
  const conn = orm.em.getConnection();
  // The secret a rotation replaced still signs during its overlap (issue 12), so it is re-sealed too:
  // once the old key leaves the keyring, a value left under it would no longer open.
  const columns = ['secret_ciphertext', 'previous_secret_ciphertext'] as const;
  const rows = await conn.execute<({ id: string } & Record<(typeof columns)[number], string | null>)[]>(
    'select id, secret_ciphertext, previous_secret_ciphertext from webhook_endpoints',
  );
  let resealed = 0;
  let current = 0;
  for (const row of rows) {
    for (const column of columns) {
      const sealed = row[column];
      if (sealed === null) continue;
      if (box.sealedUnder(sealed) === box.currentKeyId) {
        current += 1;
        continue;
      }
      const fresh = box.seal(row.id, box.open(row.id, sealed));
      await conn.execute(`update webhook_endpoints set ${column} = ? where id = ? and ${column} = ?`, [
        fresh,
        row.id,
        sealed,
      ]);
      resealed += 1;
    }
  }
  return { resealed, current };
}

async function main(): Promise<void> {
  if (process.argv[2] !== 'reseal') {
    console.error('usage: npm run -s webhook-secrets -- reseal');
    process.exit(2);
  }
  const config = loadConfig();
  const orm = await openOrm(config);
  try {
    const box = secretBoxFrom(config);
    const { resealed, current } = await resealWebhookSecrets(orm, box);
    console.log(`resealed ${resealed} signing secret(s) under key "${box.currentKeyId}"; ${current} already were`);
  } finally {
    await orm.close();
  }
}

if (require.main === module) {
  main().catch((err: Error) => {
    console.error(`reseal failed: ${err.message}`);
    process.exit(1);
  });
}
