/** The eligibility check behind the KYC gate (spec §5.3), answered by the identity side. */
export interface KycEligibility {
  /** True when the user holds an approved KYC verification scoped to the organisation. */
  isApproved(userId: string, orgId: string): Promise<boolean>;
}
