import { z } from 'zod';

/**
 * How long what a subscription holds may stay held: an unsigned draft's lifetime, and the sweep that
 * frees commitments whose workflow never started. Part of ConfigSchema (lib/runtime/config-schema.ts).
 */
export const holdSettings = {
  /**
   * API (it hands the deadline to each new workflow) and worker (the sweep gives drafts of older
   * releases theirs): days an unsigned subscription (draft or pending_signature) lives; then it is
   * cancelled with status_reason `expired` and its capacity goes back
   * (docs/decisions/0368-unsigned-drafts-expire.md).
   */
  SUBSCRIPTION_DRAFT_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(14),
  /** In seconds, replacing SUBSCRIPTION_DRAFT_TTL_DAYS when set: for a test, never production. */
  SUBSCRIPTION_DRAFT_TTL_SECONDS: z.coerce.number().int().min(1).optional(),
  /**
   * Worker: how often its Temporal Schedule runs the commitment sweep (docs/decisions/0371-commitment-sweep.md),
   * which frees capacity held by creates whose workflow never started and wakes overdue drafts.
   */
  COMMITMENT_SWEEP_INTERVAL_MINUTES: z.coerce.number().int().min(1).max(1440).default(10),
  /**
   * Worker: how old an unreleased commitment with no subscription must be before the sweep asks Temporal
   * about it. Longer than COMMAND_TIMEOUT_MS, the longest a create's workflow start can still be on its way.
   */
  COMMITMENT_SWEEP_GRACE_MINUTES: z.coerce.number().int().min(1).max(10_080).default(15),
  /** In seconds, replacing the two above when set: for a test, never production. */
  COMMITMENT_SWEEP_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).optional(),
  COMMITMENT_SWEEP_GRACE_SECONDS: z.coerce.number().int().min(1).optional(),
};
