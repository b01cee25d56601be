import { z } from 'zod';
import { ROLES } from '../../domain/principal';
import { ACCREDITATION_DECISIONS } from '../../identity';
import { shownText } from '../../lib/shown-text';

export const ExchangeBody = z.object({
  /** The identity provider's ID token (a compact JWS). */
  token: z.string().min(1).max(16_384),
});
export type ExchangeBody = z.infer<typeof ExchangeBody>;

export const CreateApiKeyBody = z.object({
  /** What the key is for, shown in lists (the key itself is shown once). */
  name: shownText(100),
});
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBody>;

export const ApiKeyParams = z.object({ key_id: z.uuid() });
export const RecordParams = z.object({ id: z.uuid() });

/** Staff may look at another user of their organisation; investors always see their own. */
export const SubjectQuery = z.object({ user_id: z.string().min(1).max(255).optional() });

const reason = shownText(1000).optional();

export const kycDecisionBody = (actions: readonly [string, ...string[]]) =>
  z.object({ action: z.enum(actions), reason });

export const CreateAccreditationBody = z.object({
  /** The ground the investor claims accreditation on. */
  method: z.enum(['income', 'net_worth', 'professional_certification', 'entity', 'other']),
});
export type CreateAccreditationBody = z.infer<typeof CreateAccreditationBody>;

export const AccreditationDocumentBody = z.object({
  file_name: shownText(255),
  content_type: z.string().regex(/^[\w.+-]+\/[\w.+-]+$/, 'a MIME type such as application/pdf'),
  /** Hex SHA-256 of the file as handed to the verification provider, to tie the record to the file. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/, '64 lowercase hex characters'),
});
export type AccreditationDocumentBody = z.infer<typeof AccreditationDocumentBody>;

export const AccreditationDecisionBody = z.object({ action: z.enum(ACCREDITATION_DECISIONS), reason });

/** A verification provider's notification: which record, and what happened to it. */
export const providerNotification = (kycActions: readonly [string, ...string[]]) =>
  z.discriminatedUnion('kind', [
    // Set A: the attempt id; Set B: the session id.
    z.object({ kind: z.literal('kyc'), id: z.uuid(), action: z.enum(kycActions), reason }),
    z.object({ kind: z.literal('accreditation'), id: z.uuid(), action: z.enum(ACCREDITATION_DECISIONS), reason }),
  ]);

export const DevMintBody = z.object({
  user_id: z.string().trim().min(1).max(255),
  org_id: z.uuid(),
  roles: z.array(z.enum(ROLES)).min(1),
  /** Also create an API key for the organisation (off when the caller already has one). */
  api_key: z.boolean().default(true),
});

// ---- Answers (the `data` of the success envelope) ----
const timestamp = z.iso.datetime({ offset: true });

/** docs/decisions/0037-token-exchange-answer.md: the exchange's answer. */
export const TokenResponse = z
  .object({ access_token: z.string(), token_type: z.literal('Bearer'), expires_in: z.number().int() })
  .meta({ id: 'TokenResponse' });

const ApiKeyView = z
  .object({
    id: z.uuid(),
    name: z.string(),
    org_id: z.uuid(),
    last_four: z.string(),
    created_by: z.string(),
    created_at: timestamp,
    revoked_at: timestamp.nullable(),
    last_used_at: timestamp.nullable(),
  })
  .meta({ id: 'ApiKey' });
/** The plain key appears in this one answer only. */
export const ApiKeyCreated = ApiKeyView.extend({
  key: z.string().describe('service_ak_<org_id>_<random>; shown once'),
}).meta({ id: 'ApiKeyCreated' });
export const ApiKeyList = z.array(ApiKeyView);

/** Set A: one KYC case per user with attempts (status of the case; attempt_status of the current attempt). */
export const KycCaseView = z
  .object({
    kyc_case_id: z.uuid(),
    current_attempt_id: z.uuid().nullable(),
    user_id: z.string(),
    status: z.string(),
    attempt_status: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'KycCase' });
/** Set B: KYC sessions; the newest is the user's KYC state. */
export const KycSessionView = z
  .object({
    session_id: z.uuid(),
    user_id: z.string(),
    status: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'KycSession' });

export const AccreditationView = z
  .object({
    id: z.uuid(),
    user_id: z.string(),
    method: z.string(),
    status: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Accreditation' });
export const AccreditationList = z.array(AccreditationView);

export const DevMintResponse = z.object({
  id_token: z.string(),
  api_key: z.string().nullable(),
  expires_in: z.number().int(),
});

export const ConsoleSessionParams = z.object({ session_id: z.uuid() });

/** A console sign-in as its organisation's administrators see it (docs/decisions/0271-console-sessions-server-side.md). */
const ConsoleSessionView = z
  .object({
    /** The `sid` of the session's access tokens, and the audit trail's `console_session`. */
    id: z.uuid(),
    org_id: z.uuid(),
    user_id: z.string(),
    roles: z.array(z.enum(ROLES)),
    /** live: renewed while its person works; expired: past expires_at; revoked: signed out or ended by an administrator. */
    status: z.enum(['live', 'expired', 'revoked']),
    created_at: timestamp,
    /** The sign-in time plus CONSOLE_SESSION_MAX_SECONDS: no renewal past it. */
    expires_at: timestamp,
    renewed_at: timestamp.nullable(),
    revoked_at: timestamp.nullable(),
    /** Who ended it: the user themselves (sign-out) or an administrator. */
    revoked_by: z.string().nullable(),
    client_address: z.string().nullable(),
    user_agent: z.string().nullable(),
  })
  .meta({ id: 'ConsoleSession' });
export const ConsoleSessionList = z.array(ConsoleSessionView);

// ---- Erasure and legal holds (docs/decisions/0381-erasure-complete.md) ----
export const UserParams = z.object({ user_id: z.string().min(1).max(255) });
export const LegalHoldBody = z.strictObject({
  /** Why the investor's data must be kept (a litigation, a regulator's request); shown to admins and audited. */
  reason: shownText(1000),
});

export const ErasureView = z
  .object({
    user_id: z.string(),
    erased_at: timestamp,
    erased_by: z.string(),
    keys_destroyed: z
      .number()
      .int()
      .describe('Data keys destroyed by this erasure (0 when the investor had none, or on a repeat)'),
    complete: z
      .boolean()
      .describe(
        'True when nothing of the investor is left in clear anywhere the service keeps it (answered 200); false, answered 202, when `unreached` lists what is',
      ),
    unreached: z
      .array(
        z.object({
          place: z
            .enum(['subscriptions', 'events', 'webhook_event_bodies', 'accreditation_documents', 'workflow_histories'])
            .describe(
              "Where: a subscription's state, an event, a delivery's stored body, a document's file name, or a subscription's workflow history in Temporal",
            ),
          count: z
            .number()
            .int()
            .min(1)
            .describe('Values still in clear (rows for events, bodies and documents; subscriptions for histories)'),
        }),
      )
      .describe(
        "What the erasure could not reach: fields written before they were sealed that are still in clear. A history keeps them until Temporal's retention removes it; the rest is retried by repeating the erasure (a new Idempotency-Key) or by `npm run personal-data -- reseal` (docs/decisions/0381)",
      ),
  })
  .meta({ id: 'Erasure' });

export const LegalHoldView = z
  .object({ user_id: z.string(), placed_at: timestamp, placed_by: z.string(), reason: z.string() })
  .meta({ id: 'LegalHold' });
