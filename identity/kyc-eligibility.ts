import type { Orm } from '../db/orm';
import type { KycEligibility } from '../domain/kyc';

/** Answers the KYC gate from the organisation-scoped verification records. */
export function kycEligibility(orm: Orm): KycEligibility {
  return {
    async isApproved(userId, orgId) {
      const rows = await orm.em
        .getConnection()
        .execute<{ status: string }[]>('select status from kyc_verifications where org_id = ? and user_id = ?', [
          orgId,
          userId,
        ]);
      return rows[0]?.status === 'approved';
    },
  };
}
