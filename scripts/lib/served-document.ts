import type { AddressInfo } from 'node:net';
import { AccessTokens } from '../../identity';
import { createApp, type ApiDeps } from '../../server';
import { loadConfig } from '../../lib/runtime/config';

/**
 * GET /openapi.json of a running API, or of an app built in process for the set: the document is
 * read off the routers at construction, so nothing behind them (database, Temporal) is touched.
 */
export async function documentFor(set: 'A' | 'B', url?: string): Promise<object> {
  if (url) return fetchDocument(url);
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    BEHAVIOUR_SET: set,
    DATABASE_URL: 'postgres://unused@127.0.0.1/unused',
    PUBLIC_BASE_URL: 'http://127.0.0.1:3000',
  });
  const unused = {} as never;
  // request-context opens a MikroORM context on every request, and the shared rate limiters take
  // the pool's knex when built (db/rate-limits.ts); named stand-ins are all either reads here.
  const orm = {
    em: { name: 'unused', fork: () => unused, getConnection: () => ({ getKnex: () => unused }) },
  } as unknown as ApiDeps['orm'];
  const app = createApp({
    config,
    orm,
    temporal: { connection: {} } as never,
    // A real signer: the app installs its revocation check on it (decision 0272); nothing is verified here.
    tokens: await AccessTokens.create({ ttlSeconds: 900 }),
    kyc: unused,
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    return await fetchDocument(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.close();
  }
}

async function fetchDocument(baseUrl: string): Promise<object> {
  const res = await fetch(`${baseUrl}/openapi.json`, { signal: AbortSignal.timeout(30_000) });
  if (!res.ok) throw new Error(`GET /openapi.json answered ${res.status}`);
  return (await res.json()) as object;
}
