import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Knex } from '@mikro-orm/postgresql';
import { noteResidue } from '../../db/personal-reseal';
import { clearCount, keepClear, personalFieldsOf, withKeptFields } from '../../domain/personal-fields';
import { subscriptionWorkflowId, type SubscriptionState } from '../../domain/subscription';
import { sealPersonalData } from '../../domain/subscription-messages';
import type { KeeperOf } from '../../webhooks';

interface Row {
  id: string;
  org_id: string;
  investor_id: string;
  state: SubscriptionState;
  version: number;
}

/** What one pass over the subscriptions found: values it sealed, and values it could not reach (a workflow that did not answer). */
export interface SubscriptionsPass {
  kept: number;
  unreached: number;
}

/**
 * Subscriptions whose state holds an investor's words in clear, written before they were sealed at
 * the door (docs/decisions/0384-resealing-fields-written-in-clear.md). A running workflow is sent the
 * sealed values (`sealPersonalData`): it projects them itself, so its state, its next continue-as-new
 * and the projection agree. A workflow Temporal no longer has is past sending to: its projection is
 * written directly, only if its version is still the one read. Either way its history keeps what the
 * old API handed it, noted as a residue while Temporal keeps that history. Without `keeperOf`, the
 * values still in clear are only counted (as unreached).
 */
export async function keepClearInSubscriptions(
  deps: { knex: Knex; temporal: Client; commandTimeoutMs: number },
  scope: { orgId?: string; userId?: string },
  keeperOf: KeeperOf | null,
  batch = 500,
): Promise<SubscriptionsPass> {
  const pass: SubscriptionsPass = { kept: 0, unreached: 0 };
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const q = deps
      .knex('subscriptions')
      .where('id', '>', after)
      .orderBy('id')
      .limit(batch)
      .select('id', 'org_id', 'investor_id', 'state', 'version');
    if (scope.orgId) q.where('org_id', scope.orgId);
    if (scope.userId) q.where('investor_id', scope.userId);
    const rows: Row[] = await q;
    for (const row of rows) {
      const fields = personalFieldsOf(row.state);
      const n = clearCount(fields);
      if (n === 0) continue;
      if (!keeperOf) {
        pass.unreached += n;
        continue;
      }
      const kept = keepClear(fields, await keeperOf(row.org_id, row.investor_id));
      const reached = await keepOne(deps, row, kept);
      if (reached) pass.kept += n;
      else pass.unreached += n;
    }
    if (rows.length < batch) return pass;
    after = rows[rows.length - 1]!.id;
  }
}

async function keepOne(
  deps: { knex: Knex; temporal: Client; commandTimeoutMs: number },
  row: Row,
  kept: ReturnType<typeof keepClear>,
): Promise<boolean> {
  const handle = deps.temporal.workflow.getHandle(subscriptionWorkflowId(row.id));
  const residue = () => noteResidue(deps.knex, { subscriptionId: row.id, orgId: row.org_id, userId: row.investor_id });
  try {
    await deps.temporal.connection.withDeadline(Date.now() + deps.commandTimeoutMs, () =>
      handle.executeUpdate(sealPersonalData, { args: [kept] }),
    );
    await residue();
    return true;
  } catch (err) {
    // A worker that does not answer in time: left for the next pass, and counted as unreached.
    if (!(err instanceof WorkflowNotFoundError)) return false;
  }
  // Closed: the projection speaks for it (and a workflow resumed from it starts from the sealed state).
  const updated = await deps
    .knex('subscriptions')
    .where({ id: row.id, version: row.version })
    .update({ state: JSON.stringify(withKeptFields(row.state, kept)) });
  if (updated === 0) return false;
  if (await historyKept(deps, row.id)) await residue();
  return true;
}

/**
 * True while Temporal may still keep the workflow's history (closed, within the namespace's retention):
 * false only when Temporal says it has none; a Temporal that cannot answer counts as keeping it.
 */
export async function historyKept(
  deps: { temporal: Client; commandTimeoutMs: number },
  subscriptionId: string,
): Promise<boolean> {
  try {
    await deps.temporal.connection.withDeadline(Date.now() + deps.commandTimeoutMs, () =>
      deps.temporal.workflow.getHandle(subscriptionWorkflowId(subscriptionId)).describe(),
    );
    return true;
  } catch (err) {
    return !(err instanceof WorkflowNotFoundError);
  }
}
