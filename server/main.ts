import './tracing-preload'; // first: see the file
import { loadConfig } from '../lib/runtime/config';
import { logger } from '../lib/runtime/logger';
import { connectClient } from '../lib/runtime/temporal';
import { serveMetrics } from '../lib/runtime/metrics-server';
import { openOrmWhenReachable, prepareServiceDatabase } from '../db/orm';
import { currentAuditKey } from '../db/audit-log';
import { AccessTokens, kycEligibility } from '../identity';
import { createApp } from './app';
import { answerUnparsableRequests } from './unparsable-requests';
import type { AddressInfo } from 'node:net';
import { warmApi } from '../api/health/warm-up';
import { Warmth } from '../api/warmth';
import { runPendingReseal } from '../api/personal/reseal-at-start';
import { stopTracing } from '../lib/runtime/tracing';

/** An API process: serves HTTP on PORT against Temporal and PostgreSQL from the environment. */
async function main(): Promise<void> {
  const config = loadConfig();
  const orm = await openOrmWhenReachable(config);
  // No key, no start: an audited action would otherwise fail only when first tried (docs/decisions/0266).
  currentAuditKey();
  await prepareServiceDatabase(orm, config);
  const temporal = await connectClient(config);
  const tokens = await AccessTokens.create({
    privateKeyPem: config.ACCESS_TOKEN_PRIVATE_KEY,
    publishedKeysPem: config.ACCESS_TOKEN_PUBLISHED_KEYS,
    ttlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
  });
  const warmth = new Warmth();
  const deps = { config, orm, temporal, tokens, kyc: kycEligibility(orm), warmth };
  const app = createApp(deps);
  const server = app.listen(config.PORT, config.HOST, () => {
    logger.info({ url: config.PUBLIC_BASE_URL }, 'api listening');
    // /ready answers 200 once this has run (docs/decisions/0302-warm-before-ready.md).
    const { address, port, family } = server.address() as AddressInfo;
    const host = address === '0.0.0.0' || address === '::' ? '127.0.0.1' : family === 'IPv6' ? `[${address}]` : address;
    void warmApi(deps, warmth, `http://${host}:${port}`).then(() => {
      logger.info('api warm');
      // Fields written in clear before sealing existed: migration 0096 asks, the first warm API seals them.
      return runPendingReseal(deps).catch((err: unknown) =>
        logger.error(
          { err },
          'the reseal of personal fields written in clear could not start; it runs at the next start',
        ),
      );
    });
  });
  server.requestTimeout = 90_000;
  answerUnparsableRequests(server);
  const metrics = config.METRICS_PORT ? await serveMetrics(config.METRICS_HOST, config.METRICS_PORT, 'api') : undefined;

  const stop = (signal: string) => {
    logger.info({ signal }, 'api stopping');
    metrics?.close();
    server.close(async () => {
      await temporal.connection.close();
      await orm.close();
      await stopTracing();
      process.exit(0);
    });
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err) => {
  logger.fatal({ err }, 'api failed');
  process.exit(1);
});
