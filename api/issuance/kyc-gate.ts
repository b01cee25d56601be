import { kycRequired } from '../../lib/errors';
import type { BehaviourSet } from '../../lib/behaviour-set';
import type { KycEligibility } from '../../domain/kyc';
import type { Principal } from '../../domain/principal';

/**
 * spec §5.3, one strategy per set. `subjectId` is the investor whose KYC matters: the caller when
 * creating or signing, the subscription's investor when staff approve.
 */
export type KycGate = (caller: Principal, subjectId: string, orgId: string) => Promise<void>;

export function kycGate(set: BehaviourSet, eligibility: KycEligibility): KycGate {
  if (set === 'A') {
    // Checked live with the identity side for the offering's organisation; the claim is only a hint.
    return async (_caller, subjectId, orgId) => {
      if (!(await eligibility.isApproved(subjectId, orgId))) throw kycRequired();
    };
  }
  // Set B: the caller's token claim decides; staff approving someone else's subscription are
  // checked against that investor's KYC record, the claim's own source (docs/decisions/0012-set-b-approval-kyc.md).
  return async (caller, subjectId, orgId) => {
    const approved = caller.userId === subjectId ? caller.kycCompleted : await eligibility.isApproved(subjectId, orgId);
    if (!approved) throw kycRequired();
  };
}
