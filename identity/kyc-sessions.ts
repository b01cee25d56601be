import { LockMode } from '@mikro-orm/core';
import { KycSessionSchema, type KycSession } from '../db/entities/identity-kyc';
import type { KycSessionStatus } from '../domain/kyc';
import { conflict, forbidden, notFound } from '../lib/errors';
import { newId } from '../lib/ids';
import { identityEvent, type IdentityChange } from './identity-change';
import type { KycModel, KycView, Mover } from './kyc-model';

const DECIDABLE: KycSessionStatus[] = ['pii_submitted', 'processing', 'requires_review'];

/** Set B: each action moves a session to the status of the same name; the event is `kyc.session.<status>`. */
const ACTIONS: Record<string, { by: Mover[]; from: KycSessionStatus[]; to: KycSessionStatus }> = {
  pii_submitted: { by: ['provider'], from: ['created'], to: 'pii_submitted' },
  processing: { by: ['provider'], from: ['created', 'pii_submitted'], to: 'processing' },
  requires_review: { by: ['provider'], from: ['pii_submitted', 'processing'], to: 'requires_review' },
  approve: { by: ['provider', 'staff'], from: DECIDABLE, to: 'approved' },
  deny: { by: ['provider', 'staff'], from: DECIDABLE, to: 'denied' },
};

const view = (s: KycSession): KycView => ({
  session_id: s.id,
  user_id: s.userId,
  status: s.status,
  created_at: s.createdAt.toISOString(),
  updated_at: s.updatedAt.toISOString(),
});

// The newest session is the user's KYC state, so the gate's row follows it.
const changed = (s: KycSession, reason?: string): IdentityChange<KycView> => ({
  result: view(s),
  events: [
    identityEvent(`kyc.session.${s.status}`, s.orgId, {
      session_id: s.id,
      user_id: s.userId,
      status: s.status,
      ...(reason ? { reason } : {}),
    }),
  ],
  verification: { orgId: s.orgId, userId: s.userId, status: s.status },
});

const newest = (em: Parameters<KycModel['current']>[0], orgId: string, userId: string) =>
  em.findOne(KycSessionSchema, { orgId, userId }, { orderBy: { createdAt: 'desc', id: 'desc' } });

export const kycSessions: KycModel = {
  actions: Object.keys(ACTIONS) as [string, ...string[]],

  async start(em, orgId, userId) {
    const latest = await newest(em, orgId, userId);
    if (latest?.status === 'approved') throw conflict('KYC_ALREADY_APPROVED', 'Your KYC is already approved');
    if (latest && latest.status !== 'denied') throw conflict('KYC_IN_PROGRESS', 'A KYC session is already in progress');
    const now = new Date();
    const session = em.create(KycSessionSchema, {
      id: newId(),
      orgId,
      userId,
      status: 'created',
      createdAt: now,
      updatedAt: now,
    });
    return changed(session);
  },

  async apply(em, target, action, by, reason) {
    const spec = ACTIONS[action];
    if (!spec) throw notFound('KYC action');
    if (!spec.by.includes(by))
      throw forbidden(`Only ${spec.by.join(' or ')} may ${action} a KYC session`, 'KYC_ACTION_NOT_ALLOWED');
    const s = await em.findOne(
      KycSessionSchema,
      { id: target.id, ...(target.orgId ? { orgId: target.orgId } : {}) },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!s) throw notFound('KYC session');
    target.allow?.({ orgId: s.orgId, userId: s.userId });
    // A notification the provider sends twice changes nothing the second time.
    if (s.status === spec.to) return { result: view(s), events: [] };
    if (!spec.from.includes(s.status))
      throw conflict('KYC_TRANSITION_NOT_ALLOWED', `Cannot ${action} a session that is ${s.status}`);
    const latest = await newest(em, s.orgId, s.userId);
    if (latest && latest.id !== s.id) throw conflict('KYC_SESSION_SUPERSEDED', 'A newer session replaced this one');
    Object.assign(s, { status: spec.to, updatedAt: new Date() });
    return changed(s, reason);
  },

  async current(em, orgId, userId) {
    const s = await newest(em, orgId, userId);
    return s && view(s);
  },
};
