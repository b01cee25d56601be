import { defineSearchAttributeKey } from '@temporalio/common';

/**
 * Search attributes operators filter open subscriptions by in the Temporal Web UI.
 * They must be registered on the namespace (`npm run temporal:setup`, scripts/temporal-setup.ts).
 * The payload codec cannot seal them (the server indexes them), so none holds personal data: ids
 * the service made, statuses and event types only (docs/decisions/0308).
 */
export const SubscriptionStatusKey = defineSearchAttributeKey('SubscriptionStatus', 'KEYWORD');
export const OfferingIdKey = defineSearchAttributeKey('OfferingId', 'KEYWORD');
/** A webhook delivery waiting on its retry schedule (spec §6.5): which endpoint, which event type, where it stands. */
export const WebhookEndpointIdKey = defineSearchAttributeKey('WebhookEndpointId', 'KEYWORD');
export const WebhookEventTypeKey = defineSearchAttributeKey('WebhookEventType', 'KEYWORD');
export const WebhookDeliveryStatusKey = defineSearchAttributeKey('WebhookDeliveryStatus', 'KEYWORD');

/** `--search-attribute` values for `temporal server start-dev` / `operator search-attribute create`. */
export const SEARCH_ATTRIBUTE_TYPES = {
  SubscriptionStatus: 'Keyword',
  OfferingId: 'Keyword',
  WebhookEndpointId: 'Keyword',
  WebhookEventType: 'Keyword',
  WebhookDeliveryStatus: 'Keyword',
} as const;
export const SEARCH_ATTRIBUTE_NAMES = Object.keys(SEARCH_ATTRIBUTE_TYPES);
