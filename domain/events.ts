/**
 * Event types and the event envelope (spec §6). Pure data: bundled into workflows.
 */
import type { BehaviourSet } from '../lib/behaviour-set';

const SUBSCRIPTION_EVENT_TYPES = [
  'subscription.created',
  'subscription.signed',
  'subscription.funded',
  'subscription.approved',
  'subscription.rejected',
  'subscription.completed',
  'subscription.cancelled',
  'subscription.info_requested',
  'subscription.voided',
] as const;

const KYC_EVENT_TYPES: Record<BehaviourSet, readonly string[]> = {
  A: [
    'kyc.attempt.created',
    'kyc.attempt.action_required',
    'kyc.attempt.needs_review',
    'kyc.attempt.approved',
    'kyc.attempt.rejected',
    'kyc.case.approved',
    'kyc.case.rejected',
    'kyc.case.resubmission_requested',
  ],
  B: [
    'kyc.session.created',
    'kyc.session.pii_submitted',
    'kyc.session.processing',
    'kyc.session.approved',
    'kyc.session.denied',
    'kyc.session.requires_review',
  ],
};

const ACCREDITATION_EVENT_TYPES: Record<BehaviourSet, readonly string[]> = {
  A: [
    'accreditation.submitted',
    'accreditation.document.uploaded',
    'accreditation.more_info_needed',
    'accreditation.approved',
    'accreditation.denied',
  ],
  B: [
    'accreditation.session.created',
    'accreditation.document.uploaded',
    'accreditation.session.submitted',
    'accreditation.session.more_info_needed',
    'accreditation.session.approved',
    'accreditation.session.denied',
  ],
};

export const TEST_PING = 'test.ping';
/**
 * Not in spec §6.2: an addition (docs/decisions/0164-endpoint-disabled-event.md). Sent to an organisation's other
 * endpoints when one is disabled (410 Gone, failing too long, or by hand).
 */
export const ENDPOINT_DISABLED = 'webhook.endpoint.disabled';

/**
 * Not in spec §6.2: operational events (docs/decisions/0415-operational-events.md), each sent only to
 * the organisation's endpoints that name it, never to the endpoint it is about. `failing`: an endpoint's
 * failed attempts since its last success reached WEBHOOK_FAILING_AFTER_ATTEMPTS, once per spell;
 * `recovered`: its first success after that; `exhausted`: a delivery failed its last automatic attempt.
 */
export const ENDPOINT_FAILING = 'webhook.endpoint.failing';
export const ENDPOINT_RECOVERED = 'webhook.endpoint.recovered';
export const DELIVERY_EXHAUSTED = 'webhook.delivery.exhausted';

/**
 * Not in spec §6.2: the investor answered staff's information request
 * (docs/decisions/0277-answering-an-information-request.md).
 */
export const INFO_PROVIDED = 'subscription.info_provided';

/**
 * Types an endpoint gets only when it names them: `*` means every type of spec §6.2, and our
 * additions are not in §6.2, so a consumer written from the spec never meets one it cannot know.
 */
export const EXPLICIT_ONLY_EVENT_TYPES: readonly string[] = [
  ENDPOINT_DISABLED,
  INFO_PROVIDED,
  ENDPOINT_FAILING,
  ENDPOINT_RECOVERED,
  DELIVERY_EXHAUSTED,
];

/** spec §6.2: what a deployment of the given set delivers; anything else is dropped silently. */
export function supportedEventTypes(set: BehaviourSet): readonly string[] {
  return [
    ...SUBSCRIPTION_EVENT_TYPES,
    ...(set === 'B' ? ['shares.issued'] : []),
    ...KYC_EVENT_TYPES[set],
    ...ACCREDITATION_EVENT_TYPES[set],
    TEST_PING,
    ENDPOINT_DISABLED,
    INFO_PROVIDED,
    ENDPOINT_FAILING,
    ENDPOINT_RECOVERED,
    DELIVERY_EXHAUSTED,
  ];
}

export const EVENT_SOURCES = {
  identity: 'service.identity',
  issuance: 'service.issuance',
  notifications: 'service.notifications',
} as const;

/** An event as published (spec §6.3 minus transport). `id` is the event_id consumers deduplicate by. */
export interface ServiceEvent {
  id: string;
  type: string;
  source: string;
  orgId: string;
  /** ISO 8601 */
  occurredAt: string;
  data: Record<string, unknown>;
  /** A processor-driven change this event stands for, audited when the event is stored; never published. */
  audit?: ProcessorAudit;
}

/**
 * What the audit trail needs of a change no person commanded: a processor's notification (a held
 * payment, a refund, a dispute), or the service itself (an unsigned draft's expiry).
 */
export interface ProcessorAudit {
  /** `<resource>.<verb>`, e.g. `payment.hold`. */
  action: string;
  /**
   * Set when the service itself moved it, not a processor: the actor is `system:<this>` and the entry
   * records the status after (docs/decisions/0368-unsigned-drafts-expire.md).
   */
  system?: string;
  processor: string | null;
  requestId: string | null;
  clientAddress: string | null;
  before: Record<string, unknown>;
}
