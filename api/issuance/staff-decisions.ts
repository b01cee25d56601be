import type { SubscriptionRecord } from '../../db/entities/subscription-record';
import type { Orm } from '../../db/orm';
import type { SubscriptionAction } from '../../domain/policy';
import type { SubscriptionView } from '../../domain/subscription-view';
import { recordCommand } from '../audit/audit-recorder';
import type { Ctx } from '../middleware/validate';

/** A command's run calls this once it has read the subscription, so the entry names it and its status before. */
export type SeenRecord = (record: SubscriptionRecord) => void;

/**
 * Staff decisions on subscriptions, in the audit trail once the workflow answers or refuses, with
 * the subscription's status before and after (api/audit/audit-recorder.ts, docs/decisions/README.md, Operating for years).
 */
export function staffDecisions(orm: Orm) {
  return (
    ctx: Ctx,
    action: SubscriptionAction,
    /** The subscription's id, or what names it until it is found (a reconciliation's reference code). */
    subject: string | { type: string; id: string },
    run: (seen: SeenRecord) => Promise<SubscriptionView>,
    /** What the entry records after; the status unless the decision moves more (a refund: its money). */
    after: (view: SubscriptionView) => Record<string, unknown> = (view) => ({ status: view.status }),
  ) =>
    recordCommand(
      orm,
      ctx,
      {
        action: `subscription.${action}`,
        subject: typeof subject === 'string' ? { type: 'subscription', id: subject } : subject,
      },
      (spec) =>
        run((record) => {
          spec.subject = { type: 'subscription', id: record.id };
          spec.before = { status: record.state.status };
        }),
      after,
    );
}
