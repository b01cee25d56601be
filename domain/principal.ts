/** Who is calling, as carried by the access token (spec §5). */
export const ROLES = ['investor', 'staff', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface Principal {
  userId: string;
  orgId: string;
  roles: Role[];
  /** Set B's KYC gate reads this claim (spec §5.3); Set A treats it as a hint only. */
  kycCompleted: boolean;
  /** The organisation API key the token was exchanged with (the audit trail names it); absent for the console. */
  apiKeyId?: string;
  /** The console sign-in the token belongs to (the audit trail names it); absent for API clients. */
  consoleSession?: string;
}
