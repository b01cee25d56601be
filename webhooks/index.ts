/**
 * The webhook delivery engine's public face (docs/decisions/0173-dispatcher-engine-shape.md). The API,
 * the activities, the worker, scripts and benchmarks import the engine from here and nowhere else.
 * Every query of the engine's tables (db/migrations/0005-webhooks.ts and later: the outbox, endpoints,
 * deliveries, attempts, queue, recoveries) lives behind this face (docs/decisions/0328-one-home-per-table.md).
 *   publish:  publishEvents (one statement: outbox, deliveries, queue, notify); aimedPublisher (the
 *             test operation's: one event to one enabled endpoint, concurrent requests in one statement)
 *   deliver:  createDeliveryEngine (a worker's dispatcher, sweep and hand-overs; a delivery
 *             workflow's attempts)
 *   manage:   endpointStore (endpoints, in the caller's transaction), retryDelivery, recoverPage,
 *             recoveriesStore, disableEndpoint, the secret box and the endpoints' sealed values, the §6.3 body
 *   read:     deliveryReads, eventReads, successRates and endpointHealth, with the rows' shapes
 *   retain:   pruneEventBatch (old events with their finished deliveries and attempts)
 *   personal: keepClearInEvents (investors' words written in clear before sealing, sealed or erased)
 */
export { publishEvents } from './events/publish';
export { aimedPublisher, warmAimedPublish } from './events/aimed-publish';
export { createDeliveryEngine, type DeliveryEngine, type RunningEngine } from './dispatch/engine';
export { retryDelivery } from './recovery/manual-retry';
export { recoverPage, type RecoveryStep } from './recovery/recovery';
export { pruneEventBatch } from './events/retention';
export { keepClearInEvents, type KeeperOf } from './events/personal-events';
export { disableEndpoint } from './endpoints/endpoint-health-store';
export { secretBoxFrom, type SecretBox } from './secrets/secret-box';
export { authenticationAad } from './secrets/authentication';
export {
  headersAad,
  headersShown,
  MAX_CUSTOM_HEADER_BYTES,
  MAX_CUSTOM_HEADERS,
  refusedHeaderName,
  refusedHeaderValue,
} from './endpoints/custom-headers';
export { renderEventBody } from './secrets/signing';
export { takeForParent } from './dispatch/workflow-shape';
export { WARM_LOCK_CLASS } from './dispatch/listener';
export {
  endpointStore,
  lockedEndpointCount,
  type EndpointStore,
  type HeadersInput,
  type PreparedAuthentication,
} from './endpoints/endpoints-store';
export { deliveryReads } from './deliveries/delivery-reads';
export { eventReads } from './events/event-reads';
export { recoveriesStore } from './recovery/recoveries-store';
export { missingCount } from './events/missing-events';
export { filterRefusals, type PayloadFilter } from './endpoints/payload-filter';
export { replaceSealedValues, SEALED_COLUMNS, sealedEndpointValues } from './secrets/sealed-secrets';
export {
  endpointHealth,
  successRates,
  SUCCESS_WINDOW_HOURS,
  type AttemptBucket,
  type SuccessRate,
} from './endpoints/endpoint-health-reads';
export {
  DELIVERY_STATUSES,
  ENDPOINT_ORDERINGS,
  RECOVERY_MODES,
  type EndpointAuthentication,
  type WebhookAttemptRow,
  type WebhookDeliveryRow,
  type WebhookEndpointReadRow,
  type WebhookRecoveryRow,
} from '../db/entities/webhook-rows';
