import type { AccreditationStatus } from '../domain/accreditation';
import type { BehaviourSet } from '../lib/behaviour-set';
import type { Mover } from './kyc-model';

interface Step {
  from: AccreditationStatus[];
  to: AccreditationStatus;
  event: string;
}

/** The accreditation life cycle of a behaviour set and the event each step emits (spec §6.2). */
export interface AccreditationFlow {
  /** The event data names the record `accreditation_id` (Set A) or `session_id` (Set B). */
  idField: 'accreditation_id' | 'session_id';
  create: { to: AccreditationStatus; event: string };
  /** The investor hands the record (back) to review. */
  submit: Step;
  documentUpload: Omit<Step, 'to'>;
  /** Decisions by staff or the provider. */
  decisions: Record<'more_info_needed' | 'approve' | 'deny', Step & { by: Mover[] }>;
}

const both: Mover[] = ['staff', 'provider'];

const SET_A: AccreditationFlow = {
  idField: 'accreditation_id',
  // Set A has no draft: creating an accreditation is submitting it.
  create: { to: 'submitted', event: 'accreditation.submitted' },
  submit: { from: ['more_info_needed'], to: 'submitted', event: 'accreditation.submitted' },
  documentUpload: { from: ['submitted', 'more_info_needed'], event: 'accreditation.document.uploaded' },
  decisions: {
    more_info_needed: {
      by: both,
      from: ['submitted'],
      to: 'more_info_needed',
      event: 'accreditation.more_info_needed',
    },
    approve: { by: both, from: ['submitted'], to: 'approved', event: 'accreditation.approved' },
    deny: { by: both, from: ['submitted', 'more_info_needed'], to: 'denied', event: 'accreditation.denied' },
  },
};

const SET_B: AccreditationFlow = {
  idField: 'session_id',
  create: { to: 'created', event: 'accreditation.session.created' },
  submit: { from: ['created', 'more_info_needed'], to: 'submitted', event: 'accreditation.session.submitted' },
  documentUpload: { from: ['created', 'submitted', 'more_info_needed'], event: 'accreditation.document.uploaded' },
  decisions: {
    more_info_needed: {
      by: both,
      from: ['submitted'],
      to: 'more_info_needed',
      event: 'accreditation.session.more_info_needed',
    },
    approve: { by: both, from: ['submitted'], to: 'approved', event: 'accreditation.session.approved' },
    deny: { by: both, from: ['submitted', 'more_info_needed'], to: 'denied', event: 'accreditation.session.denied' },
  },
};

export const accreditationFlow = (set: BehaviourSet): AccreditationFlow => (set === 'A' ? SET_A : SET_B);
export const ACCREDITATION_DECISIONS = ['more_info_needed', 'approve', 'deny'] as const;
export type AccreditationDecision = (typeof ACCREDITATION_DECISIONS)[number];
