import { z } from 'zod';

const timestamp = z.iso.datetime({ offset: true });
const text = z.string().trim().min(1).max(200);

/** Filters of the audit trail; every one optional, all of them together (AND). */
export const AuditFilterQuery = z.strictObject({
  /** The acting user's id, exactly. */
  actor: text.optional(),
  /** An action, exactly (`subscription.approve`), or every action of a resource (`subscription.*`). */
  action: text.optional(),
  subject_type: text.optional(),
  subject_id: text.optional(),
  outcome: z.enum(['succeeded', 'refused']).optional(),
  /** Entries at or after this time. */
  from: timestamp.optional(),
  /** Entries before this time. */
  to: timestamp.optional(),
});
export type AuditFilter = z.infer<typeof AuditFilterQuery>;

export const AuditEventsQuery = AuditFilterQuery.extend({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(200).optional(),
});

const Snapshot = z.record(z.string(), z.unknown()).nullable();

const AuditEventView = z
  .object({
    id: z.uuid(),
    /** The entry's place in its organisation's hash chain, from 1. */
    seq: z.string(),
    occurred_at: z.string(),
    actor: z.object({
      user_id: z.string().nullable(),
      roles: z.array(z.string()),
      api_key_id: z.string().nullable(),
      console_session: z.string().nullable(),
      client_address: z.string().nullable(),
    }),
    action: z.string(),
    subject: z.object({ type: z.string(), id: z.string() }),
    outcome: z.enum(['succeeded', 'refused']),
    /** The refusal's error code; null when it succeeded. */
    error_code: z.string().nullable(),
    request_id: z.string().nullable(),
    before: Snapshot,
    after: Snapshot,
    /** SHA-256 over prev_hash and the entry (npm run audit:verify checks the chain). */
    hash: z.string(),
    prev_hash: z.string(),
  })
  .meta({ id: 'AuditEvent' });

export const AuditEventList = z
  .object({ items: z.array(AuditEventView), next_cursor: z.string().nullable() })
  .meta({ id: 'AuditEventList' });
