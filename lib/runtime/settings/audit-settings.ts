import { z } from 'zod';
import { blankAsUnset, parseKeyring } from '../config-parsers';

/**
 * The audit trail's keys and checkpoints. Part of ConfigSchema (lib/runtime/config-schema.ts).
 */
export const auditSettings = {
  /**
   * The keys audit entries are keyed with (HMAC-SHA256), kept out of the database so whoever holds
   * the database cannot recompute the chain: `<key id>:<base64 of 32 bytes>`, comma-separated, the
   * current key first; every key listed verifies the entries that name it (rotation: put a new key
   * first, keep the old ones). Required in production; `npm start` and the tests use a public
   * development key (scripts/lib/embedded-defaults.ts). docs/decisions/0266-audit-entries-keyed-with-hmac.md.
   */
  AUDIT_HMAC_KEYS: blankAsUnset(
    z
      .string()
      .optional()
      .transform((v, ctx) => (v === undefined ? undefined : parseKeyring(v, ctx))),
  ),
  /**
   * How often the worker checkpoints each organisation's audit head (seq, hash) into the history
   * of a Temporal workflow, outside this database (docs/decisions/0267-audit-checkpoints-in-temporal.md).
   */
  AUDIT_CHECKPOINT_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(60).default(60),
};
