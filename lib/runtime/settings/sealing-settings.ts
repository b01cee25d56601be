import { z } from 'zod';
import { blankAsUnset, bool, parseKeyring, readKeyFile } from '../config-parsers';

/**
 * The keyrings Temporal payloads and personal data are sealed under, kept out of the database, and who may
 * open payloads. Part of ConfigSchema (lib/runtime/config-schema.ts).
 */
export const sealingSettings = {
  /**
   * The keyring Temporal payloads are sealed under (lib/runtime/payload-codec.ts, docs/decisions/0306): `<key id>:<base64 of
   * 32 bytes>`, comma-separated, the current key first. Every client and worker encrypts workflow inputs, results and
   * messages before they reach Temporal's server. Required in production (or TEMPORAL_PAYLOAD_KEYS_FILE).
   */
  TEMPORAL_PAYLOAD_KEYS: z
    .string()
    .optional()
    .transform((v, ctx) => (v === undefined ? undefined : parseKeyring(v, ctx))),
  /** A file holding the payload keyring in TEMPORAL_PAYLOAD_KEYS's form (a mounted secret), read once at start. */
  TEMPORAL_PAYLOAD_KEYS_FILE: z
    .string()
    .optional()
    .transform((path, ctx) => {
      if (path === undefined) return undefined;
      const text = readKeyFile(path, ctx);
      return text === undefined ? z.NEVER : parseKeyring(text, ctx);
    }),
  /**
   * Let payloads that arrive unsealed through (docs/decisions/0379-unsealed-payloads-refused.md): histories recorded
   * before the codec, on a development machine. Unset, a payload without the codec's seal is refused wherever it is
   * decoded: a signal carrying one is dropped, an update refused. Never production (lib/runtime/config.ts refuses it).
   */
  TEMPORAL_ACCEPT_UNSEALED_PAYLOADS: bool.default(false),
  /**
   * Organisations whose administrators may read payloads in clear through the codec server (/codec, for the
   * Temporal Web UI and CLI): the deployment's operators, comma-separated UUIDs. Unset: none.
   */
  CODEC_SERVER_ORG_IDS: z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.uuid())),
  /** A bearer token (32+ characters) that may use the codec server, for the Temporal CLI's --codec-auth. Unset: none. */
  CODEC_SERVER_TOKEN: z.string().min(32).optional(),
  /**
   * The keys investors' own data keys are wrapped under (AES-256-GCM), kept out of the database: `<key id>:<base64
   * of 32 bytes>`, comma-separated, the current key first; every key listed opens the data keys that name it
   * (rotation: put a new key first, keep the old ones). Personal fields are sealed under the investor's data key,
   * and erasing an investor deletes that key (docs/decisions/0313-erasure-by-crypto-shredding.md). Required in
   * production; `npm start` and the tests use a public development key (scripts/lib/embedded-defaults.ts).
   */
  PERSONAL_DATA_KEYS: blankAsUnset(
    z
      .string()
      .optional()
      .transform((v, ctx) => (v === undefined ? undefined : parseKeyring(v, ctx))),
  ),
};
