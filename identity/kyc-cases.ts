import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { KycAttemptSchema, KycCaseSchema, type KycAttempt, type KycCase } from '../db/entities/identity-kyc';
import type { KycAttemptStatus, KycCaseStatus } from '../domain/kyc';
import { conflict, forbidden, notFound } from '../lib/errors';
import { newId } from '../lib/ids';
import { identityEvent, type IdentityChange } from './identity-change';
import type { KycModel, KycView, Mover, Target } from './kyc-model';

const OPEN: KycAttemptStatus[] = ['pending', 'action_required', 'needs_review'];

interface CaseAction {
  by: Mover[];
  /** The current attempt's move; `optional` skips it when the attempt is already closed. */
  attempt: { from: KycAttemptStatus[]; to: KycAttemptStatus; event: string; optional?: boolean };
  /** The case's move; without one, the case must be pending. */
  case?: { from: KycCaseStatus[]; to: KycCaseStatus; event: string };
}

/** Set A: what each action does to the current attempt and the case. */
const ACTIONS: Record<string, CaseAction> = {
  action_required: {
    by: ['provider', 'staff'],
    attempt: { from: ['pending', 'needs_review'], to: 'action_required', event: 'kyc.attempt.action_required' },
  },
  needs_review: {
    by: ['provider', 'staff'],
    attempt: { from: ['pending', 'action_required'], to: 'needs_review', event: 'kyc.attempt.needs_review' },
  },
  approve: {
    by: ['provider', 'staff'],
    attempt: { from: OPEN, to: 'approved', event: 'kyc.attempt.approved' },
    case: { from: ['pending'], to: 'approved', event: 'kyc.case.approved' },
  },
  // The provider's verdict on one attempt; staff then reject the case or ask for a resubmission.
  reject_attempt: { by: ['provider', 'staff'], attempt: { from: OPEN, to: 'rejected', event: 'kyc.attempt.rejected' } },
  reject: {
    by: ['staff'],
    attempt: { from: OPEN, to: 'rejected', event: 'kyc.attempt.rejected', optional: true },
    // Also when a requested resubmission never came.
    case: { from: ['pending', 'resubmission_requested'], to: 'rejected', event: 'kyc.case.rejected' },
  },
  request_resubmission: {
    by: ['staff'],
    attempt: { from: OPEN, to: 'rejected', event: 'kyc.attempt.rejected', optional: true },
    case: { from: ['pending'], to: 'resubmission_requested', event: 'kyc.case.resubmission_requested' },
  },
};

const view = (c: KycCase, a: KycAttempt | null): KycView => ({
  kyc_case_id: c.id,
  current_attempt_id: c.currentAttemptId,
  user_id: c.userId,
  status: c.status,
  attempt_status: a?.status ?? null,
  created_at: c.createdAt.toISOString(),
  updated_at: c.updatedAt.toISOString(),
});

/** spec §6.3 Set A data; `status` is that of the record the event names (attempt or case). */
const event = (type: string, c: KycCase, status: string, reason?: string) =>
  identityEvent(type, c.orgId, {
    kyc_case_id: c.id,
    current_attempt_id: c.currentAttemptId,
    user_id: c.userId,
    status,
    ...(reason ? { reason } : {}),
  });

const changed = (
  c: KycCase,
  a: KycAttempt | null,
  events: IdentityChange<KycView>['events'],
): IdentityChange<KycView> => ({
  result: view(c, a),
  events,
  verification: { orgId: c.orgId, userId: c.userId, status: c.status },
});

export const kycCases: KycModel = {
  actions: Object.keys(ACTIONS) as [string, ...string[]],

  async start(em, orgId, userId) {
    const now = new Date();
    let c = await em.findOne(KycCaseSchema, { orgId, userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const current = c?.currentAttemptId ? await em.findOne(KycAttemptSchema, { id: c.currentAttemptId }) : null;
    if (c?.status === 'approved') throw conflict('KYC_ALREADY_APPROVED', 'Your KYC is already approved');
    if (c?.status === 'rejected')
      throw conflict('KYC_REJECTED', 'Your KYC case was rejected; contact the organisation');
    if (current && OPEN.includes(current.status))
      throw conflict('KYC_IN_PROGRESS', 'A KYC attempt is already in progress');
    const attemptId = newId();
    if (!c)
      c = em.create(KycCaseSchema, {
        id: newId(),
        orgId,
        userId,
        status: 'pending',
        currentAttemptId: attemptId,
        createdAt: now,
        updatedAt: now,
      });
    else Object.assign(c, { status: 'pending', currentAttemptId: attemptId, updatedAt: now });
    // The ORM knows no relation between the two tables, so the case is written first for the foreign key.
    await em.flush();
    const attempt = em.create(KycAttemptSchema, {
      id: attemptId,
      caseId: c.id,
      status: 'pending',
      createdAt: now,
      updatedAt: now,
    });
    return changed(c, attempt, [event('kyc.attempt.created', c, attempt.status)]);
  },

  async apply(em, target, action, by, reason) {
    const spec = ACTIONS[action];
    if (!spec) throw notFound('KYC action');
    if (!spec.by.includes(by))
      throw forbidden(`Only ${spec.by.join(' or ')} may ${action} a KYC case`, 'KYC_ACTION_NOT_ALLOWED');
    const { c, a } = await load(em, target, by);
    target.allow?.({ orgId: c.orgId, userId: c.userId });
    const attemptDone = a.status === spec.attempt.to || (spec.attempt.optional && !OPEN.includes(a.status));
    // A notification the provider sends twice changes nothing the second time.
    if (attemptDone && (!spec.case || c.status === spec.case.to)) return { result: view(c, a), events: [] };
    if (!(spec.case?.from ?? ['pending']).includes(c.status))
      throw conflict('KYC_TRANSITION_NOT_ALLOWED', `Cannot ${action} a KYC case that is ${c.status}`);
    const now = new Date();
    const events = [];
    if (OPEN.includes(a.status) || !spec.attempt.optional) {
      if (!spec.attempt.from.includes(a.status))
        throw conflict('KYC_TRANSITION_NOT_ALLOWED', `Cannot ${action} an attempt that is ${a.status}`);
      Object.assign(a, { status: spec.attempt.to, updatedAt: now });
      events.push(event(spec.attempt.event, c, a.status, reason));
    }
    if (spec.case) {
      Object.assign(c, { status: spec.case.to, updatedAt: now });
      events.push(event(spec.case.event, c, c.status, reason));
    }
    return changed(c, a, events);
  },

  async current(em, orgId, userId) {
    const c = await em.findOne(KycCaseSchema, { orgId, userId });
    if (!c) return null;
    return view(c, c.currentAttemptId ? await em.findOne(KycAttemptSchema, { id: c.currentAttemptId }) : null);
  },
};

/** Staff name the case (of their organisation); the provider names the attempt, which must be the current one. */
async function load(em: EntityManager, target: Target, by: Mover): Promise<{ c: KycCase; a: KycAttempt }> {
  const lock = { lockMode: LockMode.PESSIMISTIC_WRITE };
  const attempt = by === 'provider' ? await em.findOne(KycAttemptSchema, { id: target.id }, lock) : null;
  const caseId = by === 'provider' ? attempt?.caseId : target.id;
  const c = caseId
    ? await em.findOne(KycCaseSchema, { id: caseId, ...(target.orgId ? { orgId: target.orgId } : {}) }, lock)
    : null;
  if (!c || !c.currentAttemptId) throw notFound('KYC case');
  if (attempt && attempt.id !== c.currentAttemptId)
    throw conflict('KYC_ATTEMPT_SUPERSEDED', 'A newer attempt replaced this one');
  const a = attempt ?? (await em.findOne(KycAttemptSchema, { id: c.currentAttemptId }, lock));
  if (!a) throw notFound('KYC attempt');
  return { c, a };
}
