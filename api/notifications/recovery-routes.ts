import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/common';
import type { ApiDeps } from '../deps';
import { validate, type Ctx } from '../middleware/validate';
import { missingCount, recoveriesStore, type EndpointStore, type WebhookRecoveryRow } from '../../webhooks';
import { retentionWindowSeconds } from '../../lib/runtime/settings/retention-settings';
import { conflict, validationFailed } from '../../lib/errors';
import { newId } from '../../lib/ids';
import { RECOVERY_WORKFLOW, recoveryWorkflowId, type RecoveryWorkflow } from '../../domain/recovery-messages';
import { EndpointParams, ListRecoveriesQuery, RecoveryParams, StartRecoveryBody } from './schema';
import { RecoveryList, RecoveryView } from './answer-schema';
import { recoveryView } from './views';
import { ok } from '../respond';
import { recordingRefusals, recordSucceeded, type AuditSpec } from '../audit/audit-recorder';
import { byCreation, page, positionAfter } from '../cursor';

/**
 * Bulk recovery under an endpoint (docs/decisions/0167-bulk-recovery.md): POST starts one (one running per
 * endpoint) over a window that ends now or at a given time
 * (docs/decisions/0241-a-recovery-s-explicit-end-until-and-its-validation.md), GET lists them or watches
 * one's progress, DELETE asks one to stop after the chunk in flight.
 */
export function recoveryRoutes(
  router: Router,
  one: string,
  staff: Middleware,
  deps: ApiDeps & { store: EndpointStore },
): void {
  const knex = () => deps.orm.em.getConnection().getKnex();
  const recoveries = recoveriesStore(deps.orm);
  const base = `${one}/recoveries`;

  // The row first, then the workflow: a start that failed (or a crash between the two) leaves a
  // running row without a workflow, which the next POST finds and starts again (resumes).
  const start = async (id: string) => {
    await deps.temporal.workflow
      .start<RecoveryWorkflow>(RECOVERY_WORKFLOW, {
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        workflowId: recoveryWorkflowId(id),
        args: [id],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      })
      .catch((err: unknown) => {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      });
  };

  router.post(
    base,
    staff,
    validate(
      {
        params: EndpointParams,
        body: StartRecoveryBody,
        response: RecoveryView,
        status: 202,
        summary:
          "Start a bulk recovery: redeliver the endpoint's failed and exhausted deliveries created from since to until (default: now)",
      },
      async (ctx, { params, body }) => {
        const orgId = ctx.state.principal.orgId;
        // Refused before a recovery exists: the entry names the endpoint (api/audit/audit-recorder.ts).
        const spec: AuditSpec = {
          action: 'webhook_recovery.start',
          subject: { type: 'webhook_endpoint', id: params.id },
        };
        const row = await recordingRefusals(deps.orm, ctx, spec, () => begin(ctx, orgId, params.id, body));
        await start(row.id);
        ok(ctx, recoveryView(row), 202);
      },
    ),
  );

  /** The recovery's row and its audit entry, in one transaction; the workflow starts once both committed. */
  const begin = async (
    ctx: Ctx,
    orgId: string,
    endpointId: string,
    window: StartRecoveryBody,
  ): Promise<WebhookRecoveryRow> => {
    const endpoint = await deps.store.get(orgId, endpointId);
    if (endpoint.status !== 'enabled')
      throw conflict(
        'ENDPOINT_DISABLED',
        'The endpoint is disabled; re-enable it with PATCH before recovering its deliveries',
      );
    const running = await recoveries.running(endpoint.id);
    if (running) {
      await start(running.id);
      throw conflict('RECOVERY_RUNNING', 'A recovery of this endpoint is already running', {
        recovery: recoveryView(running),
      });
    }
    const id = newId();
    const since = new Date(window.since);
    const until = window.until === undefined ? new Date() : new Date(window.until);
    const { mode } = window;
    if (mode === 'missing') withinRetention(since);
    const total =
      (await recoveries.recoverableCount(endpoint.id, since, until)) +
      (mode === 'missing'
        ? await missingCount(knex(), { endpointId: endpoint.id, since, until, set: deps.config.BEHAVIOUR_SET })
        : 0);
    return knex().transaction(async (trx) => {
      const row = await recoveries.insert(trx, {
        id,
        org_id: orgId,
        endpoint_id: endpoint.id,
        since,
        until,
        total,
        mode,
      });
      await recordSucceeded(trx, ctx, {
        action: 'webhook_recovery.start',
        subject: { type: 'webhook_recovery', id },
        after: {
          endpoint_id: endpoint.id,
          mode,
          since: since.toISOString(),
          until: until.toISOString(),
          total: row.total,
        },
      });
      return row;
    });
  };

  /**
   * An event older than retention may have lost its delivery rows to the prune while it stays (another
   * delivery of it still waits), so missing would send it again: `since` must be within retention.
   */
  const withinRetention = (since: Date) => {
    const kept = retentionWindowSeconds(deps.config.RETENTION_EVENTS_SECONDS, deps.config.RETENTION_EVENTS_DAYS);
    const earliest = kept === 0 ? null : new Date(Date.now() - kept * 1000);
    if (earliest && since < earliest)
      throw validationFailed([
        {
          in: 'body',
          path: 'since',
          message: `A missing recovery reaches back as far as events are kept: at or after ${earliest.toISOString()}`,
        },
      ]);
  };

  router.get(
    base,
    staff,
    validate(
      {
        params: EndpointParams,
        query: ListRecoveriesQuery,
        response: RecoveryList,
        summary: "List the endpoint's bulk recoveries, newest first",
      },
      async (ctx, { params, query }) => {
        const orgId = ctx.state.principal.orgId;
        const endpoint = await deps.store.get(orgId, params.id);
        const rows = await recoveries.list(orgId, endpoint.id, {
          limit: query.limit,
          after: positionAfter(query.cursor),
        });
        const { items, next_cursor } = page(rows, query.limit, byCreation);
        ok(ctx, { items: items.map(recoveryView), next_cursor });
      },
    ),
  );

  router.get(
    `${base}/:recovery_id`,
    staff,
    validate(
      { params: RecoveryParams, response: RecoveryView, summary: "A bulk recovery's progress" },
      async (ctx, { params }) => {
        ok(ctx, recoveryView(await recoveries.get(ctx.state.principal.orgId, params.id, params.recovery_id)));
      },
    ),
  );

  // The stop is a flag the workflow's activity reads between chunks, so it holds across worker
  // restarts and continue-as-new; the recovery says `cancelling` until it has stopped.
  router.delete(
    `${base}/:recovery_id`,
    staff,
    validate(
      {
        params: RecoveryParams,
        response: RecoveryView,
        status: 202,
        summary: 'Stop a running bulk recovery after the chunk in flight',
      },
      async (ctx, { params }) => {
        const spec: AuditSpec = {
          action: 'webhook_recovery.cancel',
          subject: { type: 'webhook_recovery', id: params.recovery_id },
        };
        const updated = await recordingRefusals(deps.orm, ctx, spec, async () => {
          const row = await recoveries.get(ctx.state.principal.orgId, params.id, params.recovery_id);
          if (row.status !== 'running') throw conflict('RECOVERY_FINISHED', `This recovery is already ${row.status}`);
          return knex().transaction(async (trx) => {
            const changed = await recoveries.requestCancel(trx, row.id);
            await recordSucceeded(trx, ctx, {
              ...spec,
              before: { status: row.status, cancel_requested_at: row.cancel_requested_at },
              after: { status: changed.status, cancel_requested_at: changed.cancel_requested_at },
            });
            return changed;
          });
        });
        ok(ctx, recoveryView(updated), 202);
      },
    ),
  );
}
