import type { BehaviourSet } from '../lib/behaviour-set';
import { kycCases } from './kyc-cases';
import type { KycModel } from './kyc-model';
import { kycSessions } from './kyc-sessions';

/** Set A keeps a KYC case per user with attempts; Set B keeps sessions (spec §6.2). */
export const kycModel = (set: BehaviourSet): KycModel => (set === 'A' ? kycCases : kycSessions);
