import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const { EventType, WorkflowTaskFailedCause } = temporal.api.enums.v1;

/**
 * Causes that are the server's bookkeeping, not the code's: a signal or update that came while the task
 * ran (the task is retried with it), a worker gone from its sticky queue.
 */
const BOOKKEEPING = new Set([
  WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND,
  WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_STICKY_TASK_QUEUE,
]);

export interface WorkflowTaskAudit {
  workflows: number;
  /** Workflow tasks that failed for the code's sake (non-determinism first among them), one line each. */
  failed: string[];
  /** Failed for bookkeeping, and timed out (a worker stopped with a task in hand): counted, not failures. */
  bookkeeping: number;
  timedOut: number;
  /** Per workflow id: the build id of the worker that completed its last workflow task ('unversioned' when none). */
  lastBuild: Map<string, string>;
}

/** A run that `query` lists, read raw: memos and search attributes stay sealed (the services seal payloads). */
export interface ListedRun {
  workflowId: string;
  runId: string;
  type: string;
}

export async function* listRuns(
  connection: Connection,
  query: string,
  namespace = 'default',
): AsyncGenerator<ListedRun> {
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await connection.workflowService.listWorkflowExecutions({ namespace, query, nextPageToken });
    for (const e of page.executions ?? [])
      yield { workflowId: e.execution!.workflowId!, runId: e.execution!.runId!, type: e.type?.name ?? '' };
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
}

/**
 * Reads the history of every workflow `query` lists (all the cluster's, by default) and finds each failed
 * workflow task: a roll that replays a history on code that does not match it fails one with a
 * non-determinism error. Also answers which build completed each workflow's last task.
 */
export async function auditWorkflowTasks(address: string, query = ''): Promise<WorkflowTaskAudit> {
  const connection = await Connection.connect({ address });
  try {
    // Histories are read as events: their sealed payloads stay sealed.
    const client = new Client({ connection });
    const audit: WorkflowTaskAudit = { workflows: 0, failed: [], bookkeeping: 0, timedOut: 0, lastBuild: new Map() };
    for await (const w of listRuns(connection, query)) {
      audit.workflows++;
      const history = await client.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
      for (const e of history.events ?? []) {
        if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED) {
          const a = e.workflowTaskFailedEventAttributes!;
          if (BOOKKEEPING.has(a.cause!)) audit.bookkeeping++;
          else
            audit.failed.push(
              `${w.type} ${w.workflowId}: ${WorkflowTaskFailedCause[a.cause!]} ${a.failure?.message?.slice(0, 300) ?? ''}`,
            );
        } else if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) audit.timedOut++;
        else if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
          const a = e.workflowTaskCompletedEventAttributes!;
          audit.lastBuild.set(w.workflowId, a.deploymentVersion?.buildId || 'unversioned');
        }
      }
    }
    return audit;
  } finally {
    await connection.close();
  }
}
