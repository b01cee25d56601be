/**
 * `npm run temporal:setup`: what a Temporal namespace needs before the first worker starts, done
 * with operator rights the workers do not hold: the namespace (when missing) and the search
 * attributes the workflows write.
 * Idempotent; `npm start`, `npm run cluster` and the tests run it. On Temporal Cloud, run it once
 * with an API key that may manage the namespace, or add the attributes in the Cloud console.
 */
import { loadTemporalConfig } from '../lib/runtime/config';
import { logger } from '../lib/runtime/logger';
import { connectTemporal, ensureNamespace, ensureSearchAttributes } from '../lib/runtime/temporal';
import { SEARCH_ATTRIBUTE_NAMES } from '../domain/search-attributes';

export async function temporalSetup(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const config = loadTemporalConfig(env); // the setup needs no database
  const connection = await connectTemporal(config);
  try {
    await ensureNamespace(connection, config.TEMPORAL_NAMESPACE);
    await ensureSearchAttributes(connection, config.TEMPORAL_NAMESPACE, SEARCH_ATTRIBUTE_NAMES);
    logger.info({ namespace: config.TEMPORAL_NAMESPACE }, 'temporal namespace set up');
  } finally {
    await connection.close();
  }
}

if (require.main === module) {
  temporalSetup().catch((err) => {
    logger.fatal({ err }, 'temporal setup failed');
    process.exit(1);
  });
}
