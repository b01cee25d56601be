import type { MigrationObject } from '@mikro-orm/core';
import { Migration0001Issuance } from './0001-issuance';
import { Migration0002Events } from './0002-events';
import { Migration0003KycVerifications } from './0003-kyc-verifications';
import { Migration0004Identity } from './0004-identity';
import { Migration0005Webhooks } from './0005-webhooks';
import { Migration0006Payments } from './0006-payments';
import { Migration0008AttemptClaims } from './0008-attempt-claims';
import { Migration0009WebhookHealth } from './0009-webhook-health';
import { Migration0010IdempotencyKeys } from './0010-idempotency-keys';
import { Migration0011RateLimits } from './0011-rate-limits';
import { Migration0012Console } from './0012-console';
import { Migration0013EndpointOrdering } from './0013-endpoint-ordering';
import { Migration0014OfferingTotals } from './0014-offering-totals';
import { Migration0015AttemptRetryAfter } from './0015-attempt-retry-after';
import { Migration0016DeliveryQueue } from './0016-delivery-queue';
import { Migration0017CurrencyMinorUnits } from './0017-currency-minor-units';
import { Migration0030IdempotentSecretAnswers } from './0030-idempotent-secret-answers';
import { Migration0040AuditEvents } from './0040-audit-events';
import { Migration0045Retention } from './0045-retention';
import { Migration0055AttemptRequestHeaders } from './0055-attempt-request-headers';
import { Migration0056RecoveryList } from './0056-recovery-list';

/** Applied in this order; a feature appends its migration, never edits an applied one. */
export const migrationsList: MigrationObject[] = [
  { name: '0001-issuance', class: Migration0001Issuance },
  { name: '0002-events', class: Migration0002Events },
  { name: '0003-kyc-verifications', class: Migration0003KycVerifications },
  { name: '0004-identity', class: Migration0004Identity },
  { name: '0005-webhooks', class: Migration0005Webhooks },
  { name: '0006-payments', class: Migration0006Payments },
  { name: '0008-attempt-claims', class: Migration0008AttemptClaims },
  { name: '0009-webhook-health', class: Migration0009WebhookHealth },
  { name: '0010-idempotency-keys', class: Migration0010IdempotencyKeys },
  { name: '0011-rate-limits', class: Migration0011RateLimits },
  { name: '0012-console', class: Migration0012Console },
  { name: '0013-endpoint-ordering', class: Migration0013EndpointOrdering },
  { name: '0014-offering-totals', class: Migration0014OfferingTotals },
  { name: '0015-attempt-retry-after', class: Migration0015AttemptRetryAfter },
  { name: '0016-delivery-queue', class: Migration0016DeliveryQueue },
  { name: '0017-currency-minor-units', class: Migration0017CurrencyMinorUnits },
  { name: '0030-idempotent-secret-answers', class: Migration0030IdempotentSecretAnswers },
  { name: '0040-audit-events', class: Migration0040AuditEvents },
  { name: '0045-retention', class: Migration0045Retention },
  { name: '0055-attempt-request-headers', class: Migration0055AttemptRequestHeaders },
  { name: '0056-recovery-list', class: Migration0056RecoveryList },
];
