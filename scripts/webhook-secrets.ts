/**
 * `npm run -s webhook-secrets -- reseal`: after a new key was put first in WEBHOOK_SECRET_KEYS,
 * re-seals every endpoint's signing secret (and the one a rotation replaced, during its overlap, and the client key
 * or client secret of an endpoint that authenticates at the transport), and the Idempotency-Key store's kept
 * answers and body digests sealed in the same box (docs/decisions/0382-idempotency-body-digests-sealed.md),
 * still sealed under another key, so the old key can then leave the keyring. Straight to DATABASE_URL; safe to run twice and while the service runs (each
 * row is updated only if it still holds the value read; an answer kept while it ran may still be under the old
 * key: run it again until it reports none). Each endpoint resealed gets an entry in
 * its organisation's audit trail, in the transaction of its update (actor `system`, session `cli:webhook-secrets`).
 * It reads the service's own configuration, production unless NODE_ENV says otherwise (so the keys
 * it seals under are yours, never the development key); against npm start's database, where the
 * development key sealed, run it with NODE_ENV=development.
 */
import {
  authenticationAad,
  headersAad,
  replaceSealedValues,
  SEALED_COLUMNS,
  sealedEndpointValues,
  secretBoxFrom,
  type SecretBox,
} from '../webhooks';
import { resealKeptAnswers } from '../server';
import { appendAuditEvent, type AuditActor } from '../db/audit-log';
import { openOrm, type Orm } from '../db/orm';
import { loadConfig } from '../lib/runtime/config';

/** The reseal's actor in the audit trail: a command line run by an operator, not a signed-in user. */
const RESEAL_ACTOR: AuditActor = {
  userId: 'system',
  roles: ['system'],
  apiKeyId: null,
  session: 'cli:webhook-secrets',
  clientAddress: null,
  requestId: null,
};

export async function resealWebhookSecrets(
  orm: Orm,
  box: SecretBox,
): Promise<{ resealed: number; current: number; answers: { resealed: number; current: number } }> {
  const knex = orm.em.getConnection().getKnex();
  // The secret a rotation replaced still signs during its overlap, so it is re-sealed too:
  // once the old key leaves the keyring, a value left under it would no longer open.
  // So is the client key or client secret of an authenticated endpoint, sealed to its own purpose,
  // and the secret values of its custom headers (docs/decisions/0400-custom-headers-per-endpoint.md).
  const columns = SEALED_COLUMNS;
  const aad = (c: (typeof columns)[number], id: string) =>
    c === 'authentication_secret_ciphertext'
      ? authenticationAad(id)
      : c === 'headers_secret_ciphertext'
        ? headersAad(id)
        : id;
  const rows = await sealedEndpointValues(knex);
  let resealed = 0;
  let current = 0;
  for (const row of rows) {
    const stale = columns.filter((c) => row[c] !== null && box.sealedUnder(row[c]!) !== box.currentKeyId);
    current += columns.filter((c) => row[c] !== null).length - stale.length;
    if (stale.length === 0) continue;
    // Each endpoint's new values and its audit entry commit together; a row changed since it was
    // read (a rotation, another reseal) is left as it is, with no entry.
    resealed += await knex.transaction(async (trx) => {
      const fresh = Object.fromEntries(
        stale.map((c) => [c, box.seal(aad(c, row.id), box.open(aad(c, row.id), row[c]!))]),
      );
      const was = Object.fromEntries(stale.map((c) => [c, row[c]]));
      if (!(await replaceSealedValues(trx, row.id, was, fresh))) return 0;
      await appendAuditEvent(trx, {
        orgId: row.org_id,
        actor: RESEAL_ACTOR,
        action: 'webhook_endpoint.reseal_secret',
        subject: { type: 'webhook_endpoint', id: row.id },
        result: { outcome: 'succeeded' },
        // Key ids only: which key each sealed value was under, never the value.
        before: { secret_key_ids: stale.map((c) => box.sealedUnder(row[c]!)) },
        after: { secret_key_ids: stale.map(() => box.currentKeyId) },
      });
      return stale.length;
    });
  }
  return { resealed, current, answers: await resealKeptAnswers(orm, box) };
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
    const { resealed, current, answers } = await resealWebhookSecrets(orm, box);
    console.log(`resealed ${resealed} signing secret(s) under key "${box.currentKeyId}"; ${current} already were`);
    console.log(
      `resealed ${answers.resealed} kept Idempotency-Key answer(s) and digest(s); ${answers.current} already were`,
    );
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
