/**
 * Bootstraps and manages organisation API keys straight in PostgreSQL (DATABASE_URL), for the
 * first key of an organisation or when no administrator token is at hand. Afterwards an admin
 * can use POST/GET/DELETE /identity/api-keys.
 *
 *   npm run -s api-key -- create --org <org_id> --name "backend"   # prints the key once
 *   npm run -s api-key -- list --org <org_id>
 *   npm run -s api-key -- revoke --org <org_id> --id <key_id>
 */
import { parseArgs } from 'node:util';
import { loadDatabaseConfig } from '../lib/runtime/config';
import { migrate, openOrm } from '../db/orm';
import { createApiKey, listApiKeys, revokeApiKey, toApiKeyView } from '../identity';

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { org: { type: 'string' }, name: { type: 'string', default: 'bootstrap' }, id: { type: 'string' } },
  });
  const command = positionals[0];
  if (!values.org || !['create', 'list', 'revoke'].includes(command ?? '') || (command === 'revoke' && !values.id)) {
    throw new Error('usage: api-key create|list|revoke --org <org_id> [--name <name>] [--id <key_id>]');
  }
  const orm = await openOrm(loadDatabaseConfig());
  try {
    await migrate(orm);
    const em = orm.em.fork();
    if (command === 'create') {
      const { key, record } = await createApiKey(em, { orgId: values.org, name: values.name, createdBy: 'cli' });
      process.stderr.write(`created key ${record.id}; it is shown only now:\n`);
      process.stdout.write(`${key}\n`);
    } else if (command === 'list') {
      process.stdout.write(`${JSON.stringify((await listApiKeys(em, values.org)).map(toApiKeyView), null, 2)}\n`);
    } else {
      process.stdout.write(
        `${JSON.stringify(toApiKeyView(await revokeApiKey(em, values.org, values.id!)), null, 2)}\n`,
      );
    }
  } finally {
    await orm.close();
  }
}

main().catch((err: Error) => {
  process.stderr.write(`api-key: ${err.message}\n`);
  process.exit(1);
});
