import type { Knex } from '@mikro-orm/postgresql';
import { countsAsOutage, observe, type Circuit, type CircuitRules } from '../../domain/circuit-breaker';
import { preparedStatement } from '../../db/prepared';
import { logger } from '../../lib/runtime/logger';
import { recordCircuitTransition } from '../../lib/runtime/metrics';

/**
 * Applies a batch's answers to each endpoint's circuit breaker (domain/circuit-breaker.ts), in
 * answer order: a read-modify-write under the row's lock for endpoints whose last answer was an
 * outage, a conditional reset for the rest.
 */
export async function updateCircuits(
  trx: Knex.Transaction,
  observed: readonly { endpointId: string; status: number | null; durationMs: number | null }[],
  rules: CircuitRules,
): Promise<void> {
  if (observed.length === 0) return;
  const answers = new Map<string, boolean[]>();
  for (const o of observed)
    answers.set(o.endpointId, [...(answers.get(o.endpointId) ?? []), !countsAsOutage(o.status, o.durationMs)]);
  // Answered last by an endpoint that is up: closed, whatever came before. One conditional update,
  // which touches (and waits for) no row that is closed already: the usual case costs no lock.
  const up = [...answers].filter(([, a]) => a[a.length - 1]).map(([id]) => id);
  if (up.length) {
    circuitsClosed(await CLOSE_CIRCUITS(trx, [up.sort()]));
  }
  const down = [...answers.keys()].filter((id) => !up.includes(id));
  if (down.length === 0) return;
  const rows: {
    endpoint_id: string;
    circuit_state: Circuit['state'];
    consecutive_failures: number;
    open_count: number;
    opened_at: Date | null;
    probe_at: Date | null;
    now: Date;
  }[] = await trx('webhook_endpoint_flow')
    .whereIn('endpoint_id', down.sort())
    .orderBy('endpoint_id')
    .forUpdate()
    .select('*', trx.raw('now() as now'));
  const changed = [];
  for (const r of rows) {
    const before: Circuit = {
      state: r.circuit_state,
      consecutiveFailures: r.consecutive_failures,
      openCount: r.open_count,
      openedAt: r.opened_at && new Date(r.opened_at),
      probeAt: r.probe_at && new Date(r.probe_at),
    };
    const after = observe(before, answers.get(r.endpoint_id)!, new Date(r.now), rules);
    if (after === before) continue;
    if (after.state !== before.state) {
      logger.info({ endpointId: r.endpoint_id, from: before.state, to: after.state }, 'webhook endpoint circuit');
      recordCircuitTransition(after.state);
    }
    changed.push({
      endpoint_id: r.endpoint_id,
      circuit_state: after.state,
      consecutive_failures: after.consecutiveFailures,
      open_count: after.openCount,
      opened_at: after.openedAt?.toISOString() ?? null,
      probe_at: after.probeAt?.toISOString() ?? null,
    });
  }
  if (changed.length)
    await trx.raw(
      `update webhook_endpoint_flow f
          set circuit_state = v.circuit_state, consecutive_failures = v.consecutive_failures, open_count = v.open_count,
              opened_at = v.opened_at, probe_at = v.probe_at
         from jsonb_to_recordset(?::jsonb) as v(endpoint_id uuid, circuit_state text, consecutive_failures int,
                                                open_count int, opened_at timestamptz, probe_at timestamptz)
        where f.endpoint_id = v.endpoint_id`,
      [JSON.stringify(changed)],
    );
}

/** Logs and counts circuits an answer closed (here, or on the recorder's all-success path). */
export function circuitsClosed(rows: readonly { endpoint_id: string }[]): void {
  for (const r of rows) {
    logger.info({ endpointId: r.endpoint_id, to: 'closed' }, 'webhook endpoint circuit');
    recordCircuitTransition('closed');
  }
}

const CLOSE_CIRCUITS = preparedStatement<{ endpoint_id: string }>(
  'webhooks-close-circuits',
  `update webhook_endpoint_flow
      set circuit_state = 'closed', consecutive_failures = 0, open_count = 0, opened_at = null, probe_at = null
    where endpoint_id = any(?::uuid[])
      and (circuit_state <> 'closed' or consecutive_failures <> 0 or open_count <> 0)
   returning endpoint_id`,
);
