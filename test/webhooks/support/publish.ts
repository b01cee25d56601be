import type { Config } from '../../../lib/runtime/config';
import type { Orm } from '../../../db/orm';
import type { ServiceEvent } from '../../../domain/events';
import { publishEvents, type Published } from '../../../webhooks';

type Publisher = { orm: Orm; config: Pick<Config, 'BEHAVIOUR_SET'> };
type Targets = { eventId: string; endpointId: string }[];

/** Publishes as the service does: outbox, deliveries and queue in one statement; dispatchers hear at commit. */
export function publish(svc: Publisher, events: ServiceEvent[], targets: Targets = []): Promise<Published> {
  return publishEvents(svc.orm.em.getConnection().getKnex(), events, { set: svc.config.BEHAVIOUR_SET, targets });
}

/**
 * Publishes, then takes the deliveries off the queue before commit: deliveries recorded `pending`
 * that no dispatcher will ever take, as an engine before this one could leave them (a lost batch).
 */
export function publishUnqueued(svc: Publisher, events: ServiceEvent[], targets: Targets = []): Promise<Published> {
  return svc.orm.em
    .getConnection()
    .getKnex()
    .transaction(async (trx) => {
      const published = await publishEvents(trx, events, { set: svc.config.BEHAVIOUR_SET, targets });
      await trx('webhook_queue')
        .whereIn(
          'delivery_id',
          published.deliveries.map((d) => d.deliveryId),
        )
        .delete();
      return published;
    });
}

/** A subscription-style event for `orgId`, ready to publish. */
export const anEvent = (orgId: string, type = 'subscription.approved'): ServiceEvent => ({
  id: crypto.randomUUID(),
  type,
  source: 'service.issuance',
  orgId,
  occurredAt: new Date().toISOString(),
  data: { id: crypto.randomUUID() },
});
