import { createHash } from 'node:crypto';
import type { Orm } from '../db/orm';
import type { KycEligibility } from '../domain/kyc';
import { hitAll, type RateLimiter } from '../db/rate-limits';
import type { AccessTokens } from './access-tokens';
import { authenticateApiKey, parseApiKey } from './api-keys';
import type { IdTokenVerifier } from './id-token-verifier';

export interface ExchangeDeps {
  orm: Orm;
  tokens: AccessTokens;
  verifier: IdTokenVerifier;
  /** Counted per presented API key and per client address (lib/runtime/config.ts, EXCHANGE_RATE_*). */
  limits: { perKey: RateLimiter; perAddress: RateLimiter };
  kyc: KycEligibility;
}

/**
 * spec §4.2: an organisation's API key plus a user's ID token become a service access token.
 * Each check has its own error code, in this order: rate, API key, ID token, organisation.
 */
export function tokenExchange(deps: ExchangeDeps) {
  return {
    /** Counts the request against the caller's address and the presented key, valid or not. */
    async throttle(clientIp: string, apiKeyHeader: string | undefined): Promise<void> {
      const hits: [RateLimiter, string][] = [[deps.limits.perAddress, `ip:${clientIp}`]];
      if (apiKeyHeader)
        hits.push([deps.limits.perKey, `key:${createHash('sha256').update(apiKeyHeader).digest('hex')}`]);
      await hitAll(hits);
    },

    async exchange(apiKeyHeader: string | undefined, idToken: string) {
      const apiKey = await authenticateApiKey(deps.orm.em.fork(), parseApiKey(apiKeyHeader));
      const identity = await deps.verifier.verify(idToken, apiKey.orgId);
      // Read at exchange time: Set B's gate trusts this claim (spec §5.3), Set A only as a hint.
      const kycCompleted = await deps.kyc.isApproved(identity.userId, apiKey.orgId);
      const accessToken = await deps.tokens.sign({
        userId: identity.userId,
        orgId: apiKey.orgId,
        roles: identity.roles,
        kycCompleted,
        apiKeyId: apiKey.id,
      });
      return { access_token: accessToken, token_type: 'Bearer', expires_in: deps.tokens.ttlSeconds };
    },
  };
}
