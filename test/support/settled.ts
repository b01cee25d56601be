import { getSubscription } from '../../domain/subscription-messages';
import { subscriptionWorkflowId } from '../../domain/subscription';
import type { TestService } from './service';
import { eventually, until } from './wait';

/**
 * "Nothing more happens" to a subscription, observed rather than slept on: its workflow has no task
 * and no activity outstanding (every signal sent so far has been handled, every commit it led to
 * has run), and the projection stands at the workflow's own version. Returns that version.
 */
export async function subscriptionSettled(svc: TestService, id: string, timeoutMs = 30_000): Promise<number> {
  const handle = svc.temporal.workflow.getHandle(subscriptionWorkflowId(id));
  const projected = async () => {
    const [row] = await svc.orm.em
      .getConnection()
      .execute<{ version: number }[]>('select version from subscriptions where id = ?', [id]);
    return row?.version;
  };
  return eventually(
    `subscription ${id}: its workflow idle and its projection at the workflow's version`,
    async () => {
      const { raw } = await handle.describe();
      if (raw.pendingWorkflowTask) throw new Error('a workflow task is outstanding');
      if (raw.pendingActivities?.length) throw new Error(`${raw.pendingActivities.length} activities outstanding`);
      const { version } = await handle.query(getSubscription);
      const stored = await projected();
      if (stored !== version) throw new Error(`projection at version ${stored}, workflow at ${version}`);
      return version;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

/** Waits until the processor's notification `eventId` has been taken in (its processed-notification row). */
export function notificationProcessed(
  svc: TestService,
  processor: string,
  match: { eventId?: string; eventType?: string; subscriptionId?: string },
  timeoutMs = 30_000,
): Promise<{ event_id: string; event_type: string; outcome: string }> {
  const where: Record<string, string> = { processor };
  if (match.eventId) where.event_id = match.eventId;
  if (match.eventType) where.event_type = match.eventType;
  if (match.subscriptionId) where.subscription_id = match.subscriptionId;
  const knex = svc.orm.em.getConnection().getKnex();
  return until(
    `a ${processor} notification ${JSON.stringify(match)} to be processed`,
    () => knex('payment_notifications').where(where).select('event_id', 'event_type', 'outcome').first(),
    { timeoutMs },
  );
}
