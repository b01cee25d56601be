import { WorkflowNotFoundError } from '@temporalio/client';
import type { Orm } from '../../db/orm';
import { PaymentNotificationSchema } from '../../db/entities/payment-notification';
import { logger } from '../../lib/runtime/logger';
import type { InboundEvent } from '../../payments';
import type { NotificationReceipt } from '../../domain/subscription-messages';
import type { SubscriptionClient } from '../issuance/subscription-client';

export type IntakeOutcome = 'signalled' | 'ignored' | 'duplicate';

/** The notification request's id and client address, for the audit entry of what it changes. */
type IntakeRequest = Pick<NotificationReceipt, 'requestId' | 'clientAddress'>;

const NO_REQUEST: IntakeRequest = { requestId: null, clientAddress: null };

/**
 * Takes a verified processor event once: a second delivery of the same event id is acknowledged
 * and changes nothing. The id is recorded only after the workflow has the signal, so a failure in
 * between makes the processor retry; the workflow also drops a notification id it has seen.
 */
export function notificationIntake(orm: Orm, workflows: SubscriptionClient) {
  return async function take(
    processor: string,
    event: InboundEvent,
    request: IntakeRequest = NO_REQUEST,
  ): Promise<IntakeOutcome> {
    const seen = await orm.em.fork().findOne(PaymentNotificationSchema, { processor, eventId: event.id });
    if (seen) return 'duplicate';

    let outcome: 'signalled' | 'ignored' = 'ignored';
    if (event.subscriptionId && event.notifications.length) {
      try {
        const receivedVia: NotificationReceipt = { processor, ...request };
        for (const n of event.notifications) await workflows.notifyPayment(event.subscriptionId, { ...n, receivedVia });
        outcome = 'signalled';
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        logger.warn(
          { processor, eventId: event.id, subscriptionId: event.subscriptionId },
          'payment notification for an unknown subscription',
        );
      }
    }
    await orm.em
      .getConnection()
      .getKnex()('payment_notifications')
      .insert({ processor, event_id: event.id, event_type: event.type, subscription_id: event.subscriptionId, outcome })
      .onConflict(['processor', 'event_id'])
      .ignore();
    return outcome;
  };
}
