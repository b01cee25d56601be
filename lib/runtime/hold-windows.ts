import type { z } from 'zod';
import type { holdSettings } from './settings/hold-settings';

/** The windows of lib/runtime/settings/hold-settings.ts, in seconds. */
type Holds = z.infer<z.ZodObject<typeof holdSettings>>;

/** The draft lifetime in seconds: the test override when set, else the days. */
export const draftTtlSeconds = (c: Pick<Holds, 'SUBSCRIPTION_DRAFT_TTL_DAYS' | 'SUBSCRIPTION_DRAFT_TTL_SECONDS'>) =>
  c.SUBSCRIPTION_DRAFT_TTL_SECONDS ?? c.SUBSCRIPTION_DRAFT_TTL_DAYS * 86_400;

/** The commitment sweep's grace in seconds: the test override when set, else the minutes. */
export const sweepGraceSeconds = (
  c: Pick<Holds, 'COMMITMENT_SWEEP_GRACE_MINUTES' | 'COMMITMENT_SWEEP_GRACE_SECONDS'>,
) => c.COMMITMENT_SWEEP_GRACE_SECONDS ?? c.COMMITMENT_SWEEP_GRACE_MINUTES * 60;
