import type { BehaviourSet } from '../../lib/behaviour-set';

/** spec §4.3: the two sets name the same resources differently; everything else is shared. */
export interface NotificationPaths {
  endpoints: string;
  deliveries: string;
}

export const NOTIFICATION_PATHS: Record<BehaviourSet, NotificationPaths> = {
  A: { endpoints: '/webhook-endpoints', deliveries: '/webhook-deliveries' },
  B: { endpoints: '/webhooks', deliveries: '/deliveries' },
};
