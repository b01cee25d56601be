/**
 * `npm run -s webhook-secrets -- reseal`: after a new key was put first in WEBHOOK_SECRET_KEYS,
 * re-seals every endpoint's signing secret still sealed under another key, so the old key can then
 * leave the keyring. Straight to DATABASE_URL; safe to run twice and while the service runs (each
 * row is updated only if it still holds the value read).
 */
import { secretBoxFrom, type SecretBox } from '../activities/webhook-secret-box';
import { openOrm, type Orm } from '../db/orm';
import { loadConfig } from '../lib/config';

export async function resealWebhookSecrets(orm: Orm, box: SecretBox): Promise<{ resealed: number; current: number }> {
  const conn = orm.em.getConnection();
  const rows = await conn.execute<{ id: string; secret_ciphertext: string }[]>('select id, secret_ciphertext from webhook_endpoints');
  let resealed = 0;
  for (const row of rows) {
    if (box.sealedUnder(row.secret_ciphertext) === box.currentKeyId) continue;
    const sealed = box.seal(row.id, box.open(row.id, row.secret_ciphertext));
    await conn.execute('update webhook_endpoints set secret_ciphertext = ? where id = ? and secret_ciphertext = ?', [sealed, row.id, row.secret_ciphertext]);
    resealed += 1;
  }
  return { resealed, current: rows.length - resealed };
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
