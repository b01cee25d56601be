import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import {
  AccreditationDocumentSchema,
  AccreditationSchema,
  type Accreditation,
} from '../db/entities/identity-accreditation';
import { conflict, forbidden, notFound } from '../lib/errors';
import { newId } from '../lib/ids';
import { identityEvent, type IdentityChange } from './identity-change';
import type { AccreditationDecision, AccreditationFlow } from './accreditation-flow';
import type { Mover, Target } from './kyc-model';

const OPEN: Accreditation['status'][] = ['created', 'submitted', 'more_info_needed'];

/** Accreditation records of users in organisations, moved through the set's flow. */
export function accreditations(flow: AccreditationFlow) {
  const view = (a: Accreditation) => ({
    id: a.id,
    user_id: a.userId,
    method: a.method,
    status: a.status,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  });
  const event = (type: string, a: Accreditation, extra: Record<string, unknown> = {}) =>
    identityEvent(type, a.orgId, {
      [flow.idField]: a.id,
      user_id: a.userId,
      status: a.status,
      method: a.method,
      ...extra,
    });
  const moved = (
    a: Accreditation,
    type: string,
    extra?: Record<string, unknown>,
  ): IdentityChange<ReturnType<typeof view>> => ({
    result: view(a),
    events: [event(type, a, extra)],
  });

  async function load(em: EntityManager, id: string, orgId?: string): Promise<Accreditation> {
    const a = await em.findOne(
      AccreditationSchema,
      { id, ...(orgId ? { orgId } : {}) },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!a) throw notFound('Accreditation');
    return a;
  }

  /** Investors act only on their own records; anyone else gets the same 404 as for a missing one. */
  async function own(em: EntityManager, id: string, owner: { orgId: string; userId: string }) {
    const a = await load(em, id, owner.orgId);
    if (a.userId !== owner.userId) throw notFound('Accreditation');
    return a;
  }

  function step(a: Accreditation, s: { from: string[]; to: Accreditation['status'] }, what: string) {
    if (!s.from.includes(a.status))
      throw conflict('ACCREDITATION_TRANSITION_NOT_ALLOWED', `Cannot ${what} an accreditation that is ${a.status}`);
    Object.assign(a, { status: s.to, updatedAt: new Date() });
  }

  return {
    view,

    async create(em: EntityManager, owner: { orgId: string; userId: string }, method: string) {
      const open = await em.findOne(AccreditationSchema, {
        orgId: owner.orgId,
        userId: owner.userId,
        status: { $in: OPEN },
      });
      if (open) throw conflict('ACCREDITATION_IN_PROGRESS', 'An accreditation is already in progress', { id: open.id });
      const now = new Date();
      const a = em.create(AccreditationSchema, {
        id: newId(),
        ...owner,
        method,
        status: flow.create.to,
        createdAt: now,
        updatedAt: now,
      });
      return moved(a, flow.create.event);
    },

    async submit(em: EntityManager, id: string, owner: { orgId: string; userId: string }) {
      const a = await own(em, id, owner);
      step(a, flow.submit, 'submit');
      return moved(a, flow.submit.event);
    },

    /** Records a document's metadata; the file itself goes to the verification provider. */
    async addDocument(
      em: EntityManager,
      id: string,
      owner: { orgId: string; userId: string },
      doc: { file_name: string; content_type: string; sha256: string },
    ) {
      const a = await own(em, id, owner);
      if (!flow.documentUpload.from.includes(a.status))
        throw conflict(
          'ACCREDITATION_TRANSITION_NOT_ALLOWED',
          `Cannot add documents to an accreditation that is ${a.status}`,
        );
      a.updatedAt = new Date();
      const d = em.create(AccreditationDocumentSchema, {
        id: newId(),
        accreditationId: a.id,
        fileName: doc.file_name,
        contentType: doc.content_type,
        sha256: doc.sha256,
        createdAt: a.updatedAt,
      });
      return moved(a, flow.documentUpload.event, { document_id: d.id, content_type: d.contentType });
    },

    async decide(em: EntityManager, target: Target, decision: AccreditationDecision, by: Mover, reason?: string) {
      const s = flow.decisions[decision];
      if (!s.by.includes(by))
        throw forbidden(`Only ${s.by.join(' or ')} may decide this`, 'ACCREDITATION_ACTION_NOT_ALLOWED');
      const a = await load(em, target.id, target.orgId);
      target.allow?.({ orgId: a.orgId, userId: a.userId });
      // A notification the provider sends twice changes nothing the second time.
      if (a.status === s.to) return { result: view(a), events: [] };
      step(a, s, decision);
      return moved(a, s.event, reason ? { reason } : {});
    },

    async list(em: EntityManager, orgId: string, userId: string) {
      return (await em.find(AccreditationSchema, { orgId, userId }, { orderBy: { createdAt: 'desc' } })).map(view);
    },

    async get(em: EntityManager, id: string, orgId: string) {
      const a = await em.findOne(AccreditationSchema, { id, orgId });
      if (!a) throw notFound('Accreditation');
      return a;
    },
  };
}
