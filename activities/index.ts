import type { Orm } from '../db/orm';
import type { Config } from '../lib/config';
import type { PaymentProcessor } from '../domain/payment-processor';
import type { EventDispatcher } from './event-dispatcher';
import { createPaymentActivities } from './payments';
import { createProjectionActivities } from './subscription-projection';
import { createAttemptActivities } from './webhook-attempt';
import { createRecoveryActivities } from './webhook-recovery';
import { secretBoxFrom } from './webhook-secret-box';
import { policyFromConfig } from '../lib/ssrf-guard';

export interface ActivityDeps {
  orm: Orm;
  processor: PaymentProcessor;
  dispatcher: EventDispatcher;
  /** Webhooks read the set (supported event types) and the key their secrets are sealed under. */
  config?: WebhookConfig;
}

/** Every activity the worker registers, built from its dependencies (tests hand in real ones). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createProjectionActivities(deps),
    ...createPaymentActivities(deps.processor),
    ...createAttemptActivities({
      orm: deps.orm,
      secrets: () => secretBoxFrom(webhookConfig(deps)),
      ssrf: () => policyFromConfig(webhookConfig(deps)),
      health: () => healthSettings(webhookConfig(deps)),
      dispatcher: deps.dispatcher,
    }),
    ...createRecoveryActivities({
      orm: deps.orm,
      batchSize: () => webhookConfig(deps).WEBHOOK_RECOVERY_BATCH_SIZE ?? 200,
    }),
  };
}

type WebhookConfig = Pick<
  Config,
  | 'BEHAVIOUR_SET'
  | 'WEBHOOK_SECRET_KEY'
  | 'WEBHOOK_SECRET_KEYS'
  | 'NODE_ENV'
  | 'WEBHOOK_ALLOW_INSECURE_LOOPBACK'
  | 'WEBHOOK_ALLOW_PRIVATE_NETWORKS'
> &
  Partial<
    Pick<
      Config,
      'WEBHOOK_RECOVERY_BATCH_SIZE' | 'WEBHOOK_RETRY_AFTER_CAP_SECONDS' | 'WEBHOOK_DISABLE_AFTER_FAILING_SECONDS'
    >
  >;

/** Retry-After cap and auto-disable period (issue 12); lib/config.ts's defaults when a test's config leaves them out. */
export const healthSettings = (
  c: Partial<Pick<Config, 'WEBHOOK_RETRY_AFTER_CAP_SECONDS' | 'WEBHOOK_DISABLE_AFTER_FAILING_SECONDS'>>,
) => ({
  retryAfterCapMs: (c.WEBHOOK_RETRY_AFTER_CAP_SECONDS ?? 86_400) * 1000,
  failingPeriodMs: (c.WEBHOOK_DISABLE_AFTER_FAILING_SECONDS ?? 5 * 86_400) * 1000,
});

// Optional so workers that run no webhooks (some tests) need not pass it; the webhook activities refuse without it.
function webhookConfig(deps: ActivityDeps): WebhookConfig {
  if (!deps.config) throw new Error('ActivityDeps.config is required by the webhook activities');
  return deps.config;
}

export type Activities = ReturnType<typeof createActivities>;
