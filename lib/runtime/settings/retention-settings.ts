import { z } from 'zod';

/**
 * How long ended records are kept, and how the prune runs. Part of ConfigSchema
 * (lib/runtime/config-schema.ts).
 */
export const retentionSettings = {
  /**
   * Retention (docs/decisions/0202-retention-what-is-kept.md), in days; 0 keeps forever. Events with their
   * webhook deliveries and attempts: only deliveries that ended (never a pending one or one waiting for a
   * retry), and an event once none of its deliveries is left. Pruned rows are gone from every list and the
   * events API.
   */
  RETENTION_EVENTS_DAYS: z.coerce.number().int().min(0).max(36_500).default(30),
  /** Processor payment notifications (their event ids deduplicate the processor's retries). */
  RETENTION_PAYMENT_NOTIFICATIONS_DAYS: z.coerce.number().int().min(0).max(36_500).default(90),
  /** How often the worker's Temporal Schedule runs the prune (expired Idempotency-Keys go with it). */
  RETENTION_PRUNE_INTERVAL_MINUTES: z.coerce.number().int().min(1).max(1440).default(10),
  /** Rows (events, deliveries, notifications or keys) one prune statement deletes at most; attempts go with their delivery. */
  RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(250),
  /**
   * Short windows, in seconds, for a soak or a test (`npm run bench -- retention`): when set, each
   * replaces its days or minutes above. Production leaves them unset.
   */
  RETENTION_EVENTS_SECONDS: z.coerce.number().int().min(1).optional(),
  RETENTION_PAYMENT_NOTIFICATIONS_SECONDS: z.coerce.number().int().min(1).optional(),
  RETENTION_PRUNE_INTERVAL_SECONDS: z.coerce.number().int().min(5).max(86_400).optional(),
};

/** A retention window in seconds: the short override when set, else the days (0: kept forever). */
export const retentionWindowSeconds = (seconds: number | undefined, days: number): number => seconds ?? days * 86_400;
