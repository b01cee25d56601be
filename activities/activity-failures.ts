import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Knex } from '@mikro-orm/postgresql';
import {
  CONSTRAINT_REFUSED,
  DATA_REFUSED,
  REFERENCE_CODE_TAKEN,
  refusedRecord,
  type RefusedRecordDetail,
} from '../domain/activity-failures';
import { SUBSCRIPTION_WORKFLOW } from '../domain/subscription-messages';
import { subscriptionIdOfWorkflow } from '../domain/subscription';
import { noteAttention } from '../db/subscription-attention';
import { logger } from '../lib/runtime/logger';
import { recordActivityFailure } from '../lib/runtime/metrics';

/**
 * The attempt from which a failure that is still being retried is noted as needing attention and
 * logged: about 3 s into the projection's retries, 15 s into a collection's.
 */
const ATTENTION_FROM_ATTEMPT = 5;
/** A note of attention waits no longer than this on the database: a failure's answer is never held up by it. */
const NOTE_TIMEOUT_MS = 2_000;

const SQLSTATE = /^[0-9A-Z]{5}$/;

interface PgFailure {
  code?: unknown;
  constraint?: unknown;
  table?: unknown;
  column?: unknown;
}

const named = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/** The SQLSTATE of a PostgreSQL error (pg's own, or MikroORM's, which copies its fields), else null. */
function sqlstateOf(err: unknown): string | null {
  const code = (err as PgFailure | null)?.code;
  return typeof code === 'string' && SQLSTATE.test(code) ? code : null;
}

/**
 * The one mapping from what PostgreSQL answered to whether retrying can help
 * (docs/decisions/0364-refused-records-end-the-command.md). A data exception (class 22: a value
 * jsonb, a type or a length refuses) and an integrity constraint violation (class 23) are answered
 * as a non-retryable failure with a type of its own; the reference code's unique constraint as
 * REFERENCE_CODE_TAKEN, so the workflow draws again. Everything else is returned as it is and
 * retried: connection errors, 08xxx, 57P01 (a restart), 40001 and 40P01 (serialization, deadlock),
 * 53xxx (resources), and errors that are not PostgreSQL's.
 */
function asActivityFailure(err: unknown): unknown {
  const sqlstate = sqlstateOf(err);
  if (sqlstate === null) return err;
  const pg = err as PgFailure;
  if (sqlstate === '23505' && pg.constraint === 'subscriptions_reference_code_key') {
    return ApplicationFailure.nonRetryable('reference code already in use', REFERENCE_CODE_TAKEN);
  }
  const kind = sqlstate.startsWith('22') ? DATA_REFUSED : sqlstate.startsWith('23') ? CONSTRAINT_REFUSED : null;
  if (kind === null) return err;
  const detail: RefusedRecordDetail = {
    sqlstate,
    constraint: named(pg.constraint),
    table: named(pg.table),
    column: named(pg.column),
  };
  // PostgreSQL's own message can quote the refused value (personal data): the failure names the
  // SQLSTATE and the constraint, table and column instead.
  const what = kind === DATA_REFUSED ? 'a value it cannot store' : 'a row a constraint forbids';
  const where = detail.constraint ?? detail.column ?? detail.table;
  return ApplicationFailure.create({
    type: kind,
    message: `PostgreSQL refused ${what} (SQLSTATE ${sqlstate}${where ? `, ${where}` : ''}); retrying cannot help`,
    nonRetryable: true,
    details: [detail],
  });
}

/** The failure's label in the metric and its name in the attention list. */
function failureKind(failure: unknown): { label: string; type: string; final: boolean } {
  if (failure instanceof ApplicationFailure && failure.nonRetryable) {
    const type = failure.type ?? 'REFUSED';
    return { label: type.toLowerCase(), type, final: true };
  }
  return { label: 'retryable', type: 'RETRYING', final: false };
}

type AnyActivity = (...args: any[]) => Promise<unknown>;

/**
 * Every activity of the worker, wrapped (activities/index.ts): a failure is mapped as
 * asActivityFailure says, counted by workflow type, activity and failure, and, for a subscription's
 * workflow, noted as needing attention when its record is refused for good or a step keeps failing
 * (db/subscription-attention.ts). A business refusal (a processor's, a reference code taken) is an
 * answer, not a stuck step: counted, not noted.
 */
export function watchedActivities<T extends Record<string, AnyActivity>>(activities: T, knex: () => Knex): T {
  const watched: Record<string, AnyActivity> = {};
  for (const [name, run] of Object.entries(activities)) {
    watched[name] = async (...args: unknown[]) => {
      try {
        return await run(...args);
      } catch (err) {
        const failure = asActivityFailure(err);
        await noted(knex, name, args, err, failure);
        throw failure;
      }
    };
  }
  return watched as T;
}

async function noted(knex: () => Knex, name: string, args: unknown[], err: unknown, failure: unknown): Promise<void> {
  const info = activityInfo();
  const workflowType = info?.workflowType ?? 'none';
  const kind = failureKind(failure);
  recordActivityFailure(workflowType, name, kind.label);
  const attempt = info?.attempt ?? 1;
  const stuck = refusedRecord(kind.type) || (!kind.final && attempt >= ATTENTION_FROM_ATTEMPT);
  if (!stuck) return;
  const sqlstate = sqlstateOf(err);
  logger.warn(
    {
      workflowType,
      workflowId: info?.workflowExecution?.workflowId,
      activity: name,
      attempt,
      failure: kind.type,
      sqlstate,
      // A PostgreSQL message may quote a value; any other error's is ours.
      ...(sqlstate === null && { err: err instanceof Error ? err.message : String(err) }),
    },
    kind.final ? 'activity refused for good: its step cannot land' : 'activity keeps failing: still retried',
  );
  const subscriptionId =
    workflowType === SUBSCRIPTION_WORKFLOW ? subscriptionIdOfWorkflow(info?.workflowExecution?.workflowId) : null;
  if (subscriptionId === null) return;
  const orgId = (args[0] as { orgId?: unknown } | undefined)?.orgId;
  const note = noteAttention(knex(), {
    subscriptionId,
    orgId: typeof orgId === 'string' ? orgId : null,
    step: name,
    failure: kind.type,
    sqlstate,
    constraintName: named((err as PgFailure | null)?.constraint),
    attempt: kind.final ? 1 : attempt,
  }).then(
    () => 'noted' as const,
    (noteErr: unknown) => noteErr,
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), NOTE_TIMEOUT_MS);
  });
  const outcome = await Promise.race([note, late]);
  clearTimeout(timer);
  if (outcome !== 'noted')
    logger.warn({ subscriptionId, step: name, err: outcome }, 'could not note the subscription as needing attention');
}

/** The running activity's info; none when an activity function is called outside an activity (tests, the start path). */
function activityInfo(): Context['info'] | null {
  try {
    return Context.current().info;
  } catch {
    return null;
  }
}
