/**
 * The KYC records' states (spec §5); their transitions live in identity/ (kyc-cases.ts, kyc-sessions.ts),
 * as the subscription's states live here and its transitions in workflows/.
 */

/** Set A: one KYC case per user and organisation; each verification try is an attempt. */
export type KycCaseStatus = 'pending' | 'approved' | 'rejected' | 'resubmission_requested';
export type KycAttemptStatus = 'pending' | 'action_required' | 'needs_review' | 'approved' | 'rejected';
/** Set B: each verification try is a session; the newest one is the user's KYC state. */
export type KycSessionStatus = 'created' | 'pii_submitted' | 'processing' | 'requires_review' | 'approved' | 'denied';

/** The eligibility check behind the KYC gate (spec §5.3), answered by the identity side. */
export interface KycEligibility {
  /** True when the user holds an approved KYC verification scoped to the organisation. */
  isApproved(userId: string, orgId: string): Promise<boolean>;
}
