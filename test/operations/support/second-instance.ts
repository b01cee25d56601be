import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../../server/app';
import { kycEligibility } from '../../../identity/kyc-eligibility';
import type { Config } from '../../../lib/runtime/config';
import type { TestService } from '../../support/service';

/**
 * Another API instance of the same deployment: its own Koa app (and so its own limiters) on its
 * own port, over the same database, Temporal and signing key, as a second replica would be.
 */
export async function secondInstance(
  svc: TestService,
  overrides: Partial<Config> = {},
): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const config = { ...svc.config, ...overrides };
  const app = createApp({
    config,
    orm: svc.orm,
    temporal: svc.temporal,
    tokens: svc.tokens,
    kyc: kycEligibility(svc.orm),
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
