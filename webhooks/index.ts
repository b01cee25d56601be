/**
 * The webhook delivery engine's public face (docs/decisions/0173-dispatcher-engine-shape.md). The API,
 * the activities, the worker, scripts and benchmarks import the engine from here and nowhere else.
 *   publish:  publishEvents (one statement: outbox, deliveries, queue, notify); aimedPublisher (the
 *             test operation's: one event to one enabled endpoint, concurrent requests in one statement)
 *   deliver:  createDeliveryEngine (a worker's dispatcher, sweep and hand-overs; a delivery
 *             workflow's attempts)
 *   manage:   retryDelivery, recoverPage, disableEndpoint, the secret box, the §6.3 body
 *   retain:   pruneEventBatch (old events with their finished deliveries and attempts)
 */
export { publishEvents } from './publish';
export { aimedPublisher, warmAimedPublish } from './aimed-publish';
export { createDeliveryEngine, type DeliveryEngine, type RunningEngine } from './engine';
export { retryDelivery } from './manual-retry';
export { recoverPage, type RecoveryStep } from './recovery';
export { pruneEventBatch } from './retention';
export { disableEndpoint } from './endpoint-health-store';
export { lastAttemptNumber } from './attempt-store';
export { secretBoxFrom, newSigningSecret, type SecretBox } from './secret-box';
export { authenticationAad } from './authentication';
export { renderEventBody, type EnvelopeSource } from './signing';
export { takeForParent } from './workflow-shape';
export { WARM_LOCK_CLASS } from './listener';
