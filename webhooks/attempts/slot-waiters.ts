import type { Client } from '@temporalio/client';
import { slotFree } from '../../domain/webhook-messages';
import { logger } from '../../lib/runtime/logger';
import { signalDelivery } from '../deliveries/delivery-signal';

/**
 * The most waiters a worker remembers. One whose workflow moved to another worker stays listed until
 * a freed slot picks it; past this many the oldest is forgotten, and comes back at its timer.
 */
const MAX_WAITERS = 50_000;

/**
 * `workflow` shape: the deliveries this process held because every slot was taken, their endpoint's
 * or their organisation's, oldest first (docs/decisions/0337-held-attempts-woken.md). An attempt that
 * ends frees a slot and wakes one of them: its endpoint's oldest waiter, else its organisation's.
 * Best effort by design: a waiter held in another worker, or one whose wake-up is lost in a crash,
 * comes back on its own durable timer, as it did before.
 */
export function slotWaiters() {
  const byEndpoint = new Map<string, Set<string>>();
  const byOrg = new Map<string, Set<string>>();
  /** Each waiter's endpoint and organisation, so one that asks again leaves both lists. */
  const where = new Map<string, { endpointId: string; orgId: string }>();

  const add = (lists: Map<string, Set<string>>, key: string, id: string) => {
    const list = lists.get(key) ?? new Set<string>();
    lists.set(key, list.add(id));
  };
  const remove = (lists: Map<string, Set<string>>, key: string, id: string) => {
    const list = lists.get(key);
    if (list?.delete(id) && list.size === 0) lists.delete(key);
  };
  const oldest = (lists: Map<string, Set<string>>, key: string) => lists.get(key)?.values().next().value;

  /** The delivery asks again (woken or not): it waits no longer. */
  const leave = (deliveryId: string): void => {
    const at = where.get(deliveryId);
    if (!at) return;
    where.delete(deliveryId);
    remove(byEndpoint, at.endpointId, deliveryId);
    remove(byOrg, at.orgId, deliveryId);
  };

  return {
    leave,
    /** The delivery waits for a slot of its endpoint or organisation. */
    hold(deliveryId: string, endpointId: string, orgId: string): void {
      leave(deliveryId);
      const eldest = where.size >= MAX_WAITERS ? where.keys().next() : undefined;
      if (eldest && !eldest.done) leave(eldest.value);
      where.set(deliveryId, { endpointId, orgId });
      add(byEndpoint, endpointId, deliveryId);
      add(byOrg, orgId, deliveryId);
    },
    /** A slot of this endpoint (and so of its organisation) came free: the waiter it goes to, taken off the lists. */
    next(endpointId: string, orgId: string): string | undefined {
      const id = oldest(byEndpoint, endpointId) ?? oldest(byOrg, orgId);
      if (id) leave(id);
      return id;
    },
  };
}

/**
 * Tells a held delivery's workflow that a slot came free, without waiting for the answer: a workflow
 * that has ended, or a signal that fails, costs the waiter only its timer.
 */
export function wakeWaiter(temporal: Client, deliveryId: string): void {
  signalDelivery(temporal, deliveryId, slotFree).catch((err: unknown) =>
    logger.warn({ err, deliveryId }, 'held delivery not woken'),
  );
}
