import type { Orm } from '../../db/orm';
import { SubscriptionRecordSchema, type SubscriptionRecord } from '../../db/entities/subscription-record';
import { notFound } from '../../lib/errors';
import type { Principal } from '../../domain/principal';
import { authorize, seesWholeOrganisation, type SubscriptionAction } from '../../domain/policy';
import type { SubscriptionState } from '../../domain/subscription';
import { toSubscriptionView } from '../../domain/subscription-view';
import { olderThan, page } from '../cursor';

/** The projection's last word on a subscription, without any caller: for workflows that have closed. */
export function projectionOf(orm: Orm) {
  return {
    async state(id: string): Promise<SubscriptionState | null> {
      const record = await orm.em.fork().findOne(SubscriptionRecordSchema, { id });
      return record ? record.state : null;
    },
  };
}
export type Projection = ReturnType<typeof projectionOf>;

/** Reads from the projection, each one through the policy (domain/policy.ts). */
export function subscriptionReads(orm: Orm) {
  return {
    /** The subscription, once the policy allows `action` on it for this caller. */
    async authorized(id: string, p: Principal, action: SubscriptionAction): Promise<SubscriptionRecord> {
      const record = await orm.em.fork().findOne(SubscriptionRecordSchema, { id, orgId: p.orgId });
      if (!record) throw notFound('Subscription');
      authorize(p, action, record);
      return record;
    },

    /** The subscription when it is recorded (the policy allowing `action`), or null when there is none. */
    async ifRecorded(id: string, p: Principal, action: SubscriptionAction): Promise<SubscriptionRecord | null> {
      const record = await orm.em.fork().findOne(SubscriptionRecordSchema, { id, orgId: p.orgId });
      if (record) authorize(p, action, record);
      return record;
    },

    async byReferenceCode(code: string, p: Principal): Promise<SubscriptionRecord> {
      const record = await orm.em
        .fork()
        .findOne(SubscriptionRecordSchema, { referenceCode: code.toUpperCase(), orgId: p.orgId });
      if (!record) throw notFound('Subscription with that reference code');
      authorize(p, 'reconcile', record);
      return record;
    },

    /** Newest first, keyset-paged by (created_at, id). */
    async list(p: Principal, q: { status?: string; offering_id?: string; limit: number; cursor?: string }) {
      const where: Record<string, unknown> = { orgId: p.orgId };
      if (!seesWholeOrganisation(p)) where.investorId = p.userId;
      if (q.status) where.status = q.status;
      if (q.offering_id) where.offeringId = q.offering_id;
      if (q.cursor) Object.assign(where, olderThan(q.cursor));
      const rows = await orm.em.fork().find(SubscriptionRecordSchema, where, {
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        limit: q.limit + 1,
      });
      const { items, next_cursor } = page(rows, q.limit, (r) => ({ at: r.createdAt, id: r.id }));
      return { items: items.map((r) => toSubscriptionView(r.state)), next_cursor };
    },
  };
}
