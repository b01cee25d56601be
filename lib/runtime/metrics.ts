import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The service's own Prometheus metrics, one registry per process. The API serves it at /metrics;
 * a worker process serves it on WORKER_METRICS_PORT (the Temporal SDK's metrics have their own
 * port, TEMPORAL_METRICS_PORT). Labels are bounded sets only: a route template, never a raw path.
 * @internal exported for its tests
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'tranche_' });

export const httpRequests = new Counter({
  name: 'tranche_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: 'tranche_http_request_duration_seconds',
  help: 'Time from receiving a request to answering it, by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export type DeliveryOutcome = 'success' | 'exhausted' | 'endpoint_deleted';

const deliveries = new Counter({
  name: 'tranche_webhook_deliveries_total',
  help: 'Webhook deliveries that ended, by outcome (spec §6.5)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

const attempts = new Counter({
  name: 'tranche_webhook_attempts_total',
  help: 'Webhook delivery attempts made, by outcome and response status class (none: no response)',
  labelNames: ['outcome', 'status_class'] as const,
  registers: [registry],
});

// Deliveries back off for up to about 1.5 days (spec §6.5), so the buckets reach that far.
const publishToDelivery = new Histogram({
  name: 'tranche_webhook_publish_to_delivery_seconds',
  help: 'Time from an event being published to its successful delivery to an endpoint',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14_400, 43_200, 86_400, 172_800],
  registers: [registry],
});

// An attempt ends within the response timeout; the last bucket is past any the settings allow.
const attemptDuration = new Histogram({
  name: 'tranche_webhook_attempt_duration_seconds',
  help: 'Time from sending a webhook attempt to its answer (or its failure), by outcome; attempts not measured (in doubt) are left out',
  labelNames: ['outcome'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60],
  registers: [registry],
});

/**
 * Counts one attempt: `responseStatus` is the endpoint's HTTP status, or null when none came (timeout,
 * refused); `durationMs` how long it took, null when not measured.
 */
export function recordWebhookAttempt(
  outcome: 'success' | 'failed',
  responseStatus: number | null,
  durationMs: number | null,
): void {
  attempts.inc({ outcome, status_class: responseStatus === null ? 'none' : `${Math.floor(responseStatus / 100)}xx` });
  if (durationMs !== null && Number.isFinite(durationMs) && durationMs >= 0)
    attemptDuration.observe({ outcome }, durationMs / 1000);
}

/** Counts one delivery that ended; on success, also how long after publication it arrived. */
export function recordWebhookDelivery(outcome: DeliveryOutcome, publishedAt?: Date | string): void {
  deliveries.inc({ outcome });
  if (outcome === 'success' && publishedAt !== undefined) {
    const seconds = (Date.now() - new Date(publishedAt).getTime()) / 1000;
    if (Number.isFinite(seconds) && seconds >= 0) publishToDelivery.observe(seconds);
  }
}

const sweeps = new Counter({
  name: 'tranche_webhook_sweeps_total',
  help: "Runs of the delivery engine's safety-net sweep (webhooks/dispatch/sweep.ts)",
  registers: [registry],
});

const circuits = new Counter({
  name: 'tranche_webhook_circuit_transitions_total',
  help: "Webhook endpoints' circuit breakers changing state, by the state entered",
  labelNames: ['to'] as const,
  registers: [registry],
});

const proxyFailures = new Counter({
  name: 'tranche_webhook_proxy_failures_total',
  help: 'Webhook attempts the egress proxy (WEBHOOK_HTTP_PROXY) failed, not the receiver: retried on schedule, not counted against the endpoint (docs/decisions/0405-egress-through-a-connect-proxy.md)',
  registers: [registry],
});

/** Counts one attempt the egress proxy failed. */
export const recordProxyFailure = (): void => proxyFailures.inc();

const resultsSetAside = new Counter({
  name: 'tranche_webhook_results_set_aside_total',
  help: 'Attempt results whose record failed alone while the database answered: set aside and retried on their own (webhooks/attempts/result-recorder.ts)',
  registers: [registry],
});

const deliveryWorkflowStarts = new Counter({
  name: 'tranche_webhook_delivery_workflow_starts_total',
  help: "Delivery workflows the `workflow` shape's start path started, by whether their first task came back in the start's answer (eager)",
  labelNames: ['eager'] as const,
  registers: [registry],
});

const firstAttemptsBegun = new Counter({
  name: 'tranche_webhook_first_attempts_begun_total',
  help: "First attempts the `workflow` shape's start path began itself for a delivery workflow whose first task came back in the start's answer; the run's local activity joins each",
  registers: [registry],
});

/** Counts one first attempt the start path began for a run it started eagerly. */
export const recordFirstAttemptBegun = (): void => firstAttemptsBegun.inc();

/** Counts one delivery workflow started by the engine's start path, eagerly or through the task queue. */
export const recordDeliveryWorkflowStart = (eager: boolean): void =>
  deliveryWorkflowStarts.inc({ eager: String(eager) });

/** Counts one attempt result set aside by the recorder. */
export const recordResultSetAside = (): void => resultsSetAside.inc();

/** Counts one finished sweep. */
export const recordSweep = (): void => sweeps.inc();

/** Counts one endpoint's circuit entering `to`. */
export const recordCircuitTransition = (to: 'open' | 'closed' | 'half_open'): void => circuits.inc({ to });

const rowsPruned = new Counter({
  name: 'tranche_retention_rows_pruned_total',
  help: 'Rows the retention prune deleted, by table',
  labelNames: ['table'] as const,
  registers: [registry],
});

const lastPrune = new Gauge({
  name: 'tranche_retention_last_run_timestamp_seconds',
  help: 'When the last retention prune run finished (Unix time), as seen by the worker that finished it',
  registers: [registry],
});

const lastPruneRows = new Gauge({
  name: 'tranche_retention_last_run_rows',
  help: 'Rows the last finished retention prune run deleted, by table',
  labelNames: ['table'] as const,
  registers: [registry],
});

/** Counts rows one prune statement deleted. */
export function recordRowsPruned(counts: Record<string, number>): void {
  for (const [table, n] of Object.entries(counts)) if (n > 0) rowsPruned.inc({ table }, n);
}

/** Notes a finished prune run: when, and what it deleted in all. */
export function recordPruneRun(finishedAt: Date, counts: Record<string, number>): void {
  lastPrune.set(finishedAt.getTime() / 1000);
  for (const [table, n] of Object.entries(counts)) lastPruneRows.set({ table }, n);
}

/**
 * Activity attempts that failed, by the workflow that ran them, the activity, and the failure:
 * `data_refused` / `constraint_refused` (PostgreSQL refused the write: not retried), another
 * non-retryable type in lower case (a processor's refusal, a reference code taken), or `retryable`
 * (retried on its policy). A worker's (docs/decisions/0366-subscriptions-needing-attention.md).
 */
const activityFailures = new Counter({
  name: 'tranche_activity_failures_total',
  help: 'Activity attempts that failed, by workflow type, activity and failure (data_refused, constraint_refused, retryable, or the refusal type)',
  labelNames: ['workflow_type', 'activity', 'failure'] as const,
  registers: [registry],
});

/** Counts one failed activity attempt. */
export const recordActivityFailure = (workflowType: string, activity: string, failure: string): void =>
  activityFailures.inc({ workflow_type: workflowType, activity, failure });

/**
 * Subscriptions whose last step failed, every organisation's (GET /issuance/attention lists them),
 * read from the database at each scrape of the API's metrics. Several API processes report the same
 * number: take the max, not the sum.
 */
export function countSubscriptionsNeedingAttention(read: () => Promise<number>): void {
  registry.removeSingleMetric('tranche_subscriptions_needing_attention');
  new Gauge({
    name: 'tranche_subscriptions_needing_attention',
    help: 'Subscriptions whose last step failed for good or keeps failing (GET /issuance/attention); the same in every API process',
    registers: [registry],
    async collect() {
      this.set(await read().catch(() => Number.NaN));
    },
  });
}

/**
 * When this worker last took the audit checkpoint (Unix time of its `takenAt`): the activity's
 * result, which the workflow keeps in its memo next. With several workers, take the max. 0 until this
 * process has taken one. Stale past twice AUDIT_CHECKPOINT_INTERVAL_SECONDS is what audit:verify
 * refuses (docs/decisions/0380-audit-checkpoint-gone-is-seen.md); the alert reads the same age.
 */
const auditCheckpointTaken = new Gauge({
  name: 'tranche_audit_checkpoint_last_taken_timestamp_seconds',
  help: 'When this worker last took the audit checkpoint (Unix time); 0 until it has taken one: take the max over workers',
  registers: [registry],
});

/** Notes an audit checkpoint taken by this process, at `takenAt`. */
export function recordAuditCheckpoint(takenAt: string): void {
  const seconds = new Date(takenAt).getTime() / 1000;
  if (Number.isFinite(seconds)) auditCheckpointTaken.set(seconds);
}

/**
 * How long the oldest webhook delivery never yet attempted (`pending`) has waited, every
 * organisation's, read from the database at each scrape of the API's metrics (0 when none waits).
 * Several API processes report the same number: take the max.
 */
export function measurePendingDeliveryAge(read: () => Promise<number>): void {
  registry.removeSingleMetric('tranche_webhook_oldest_pending_delivery_age_seconds');
  new Gauge({
    name: 'tranche_webhook_oldest_pending_delivery_age_seconds',
    help: 'Age of the oldest webhook delivery not yet attempted that waits for the engine, not its receiver (not ordered, circuit closed); 0 when none; the same in every API process',
    registers: [registry],
    async collect() {
      this.set(await read().catch(() => Number.NaN));
    },
  });
}

const commitmentsSwept = new Counter({
  name: 'tranche_commitments_swept_total',
  help: 'Capacity commitments the sweep gave back because their workflow never started (docs/decisions/0371-commitment-sweep.md)',
  registers: [registry],
});

const draftsWoken = new Counter({
  name: 'tranche_overdue_drafts_woken_total',
  help: 'Unsigned subscriptions past their lifetime the sweep woke with their deadline (docs/decisions/0368-unsigned-drafts-expire.md)',
  registers: [registry],
});

/** Counts one commitment the sweep gave back. */
export const recordCommitmentSwept = (): void => commitmentsSwept.inc();

/** Counts one overdue unsigned subscription the sweep woke. */
export const recordDraftWoken = (): void => draftsWoken.inc();

/** The text a Prometheus scrape reads, and its content type. */
export async function scrape(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

const warmUpSeconds = new Gauge({
  name: 'tranche_warm_up_seconds',
  help: 'How long each part of the start-up warm-up took; a part is listed once it has run (docs/decisions/0302-warm-before-ready.md)',
  labelNames: ['part'] as const,
  registers: [registry],
});

/** Records one warmed part of this process's start-up, and how long it took. */
export function recordWarmUp(part: string, seconds: number): void {
  warmUpSeconds.set({ part }, seconds);
}
