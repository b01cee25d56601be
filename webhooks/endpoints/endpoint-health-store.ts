import type { Knex } from '@mikro-orm/postgresql';
import type { BehaviourSet } from '../../lib/behaviour-set';
import { disableReason, type DisableReason } from '../../domain/endpoint-health';
import { ENDPOINT_DISABLED, EVENT_SOURCES, type ServiceEvent } from '../../domain/events';
import { newId } from '../../lib/ids';
import { publishEvents } from '../events/publish';
import { stopWaiting } from '../deliveries/attempt-store';
import { endFailingSpells, publishFailing } from '../events/operational-events';

/**
 * Disables an enabled endpoint and, in the same transaction, publishes `webhook.endpoint.disabled`
 * to the organisation's endpoints that name that type (never through `*`:
 * docs/decisions/0180-endpoint-disabled-explicit-only.md). The
 * endpoint's queued deliveries leave the queue. Answers false, publishing nothing, when the
 * endpoint was already disabled or is deleted: a second caller changes nothing.
 */
export async function disableEndpoint(
  db: Knex | Knex.Transaction,
  set: BehaviourSet,
  endpointId: string,
  reason: DisableReason,
  at: Date = new Date(),
): Promise<boolean> {
  const run = async (trx: Knex.Transaction) => {
    const [row]: { id: string; org_id: string; url: string; description: string }[] = await trx('webhook_endpoints')
      .where({ id: endpointId, status: 'enabled' })
      .whereNull('deleted_at')
      .update({ status: 'disabled', disabled_reason: reason, disabled_at: at, updated_at: trx.fn.now() })
      .returning(['id', 'org_id', 'url', 'description']);
    if (!row) return false;
    // Its queued first attempts end now, failed with the reason and recoverable, in the transaction
    // that disables it: a dispatcher round might otherwise only look after a re-enable and never see
    // the endpoint disabled (docs/decisions/0290-nothing-left-pending.md). Ordered ones are their
    // subscription's ordered workflow's to end.
    const queued: { delivery_id: string }[] = await trx('webhook_queue')
      .where({ endpoint_id: endpointId })
      .whereNull('ordered_key')
      .del()
      .returning('delivery_id');
    await stopWaiting(
      trx,
      queued.map((q) => q.delivery_id),
    );
    const event: ServiceEvent = {
      id: newId(),
      type: ENDPOINT_DISABLED,
      source: EVENT_SOURCES.notifications,
      orgId: row.org_id,
      occurredAt: at.toISOString(),
      data: { endpoint_id: row.id, url: row.url, description: row.description, reason, disabled_at: at.toISOString() },
    };
    await publishEvents(trx, [event], { set });
    return true;
  };
  return 'isTransaction' in db && db.isTransaction ? run(db as Knex.Transaction) : (db as Knex).transaction(run);
}

/** One answer (or failure to answer) of an endpoint, at the delivery schedule's time. */
export interface ObservedAttempt {
  endpointId: string;
  status: number | null;
  at: Date;
  /** It took most of the 30 s (domain/circuit-breaker.ts, tooSlow): a 2xx so slow counts as a failure here. */
  slow?: boolean;
}

/** What the recorder applies to each endpoint's answers. */
export interface HealthRules {
  set: BehaviourSet;
  /** Failing every attempt this long disables the endpoint. */
  failingPeriodMs: number;
  /** Failed attempts in a row that publish `webhook.endpoint.failing`, once per spell. */
  failingAfterAttempts: number;
}

/**
 * Keeps each endpoint's "failing since" (docs/decisions/0163-endpoint-status.md) and its failing spell
 * (docs/decisions/0415-operational-events.md) from a batch of answers, inside the caller's transaction:
 * publishes `webhook.endpoint.failing` when an endpoint's failed attempts since its last success reach
 * `failingAfterAttempts`, `webhook.endpoint.recovered` at its first success after that, and answers the
 * endpoints these answers disable: a 410 Gone at once, or nothing but failures for `failingPeriodMs`.
 * Cheap on the hot path: successes write only rows that were failing, and a batch's failures cost one
 * statement whatever the number of endpoints, which writes no row whose spell is already reported.
 */
export async function noteAttemptOutcomes(
  trx: Knex.Transaction,
  rules: HealthRules,
  observed: readonly ObservedAttempt[],
): Promise<Map<string, { reason: DisableReason; at: Date }>> {
  const ok = (o: ObservedAttempt) => isOk(o.status) && !o.slow;
  const succeededAt = new Map<string, Date>();
  for (const o of observed.filter(ok))
    if (!succeededAt.has(o.endpointId) || succeededAt.get(o.endpointId)! < o.at) succeededAt.set(o.endpointId, o.at);
  // An endpoint with a success in the batch is not "failing every attempt", whatever else it answered.
  const failures = observed.filter((o) => !ok(o) && !succeededAt.has(o.endpointId));
  await endFailingSpells(trx, rules.set, succeededAt);
  const disabled = new Map<string, { reason: DisableReason; at: Date }>();
  if (!failures.length) return disabled;

  const spell = new Map<string, { first: Date; last: ObservedAttempt; n: number }>();
  for (const f of failures) {
    const s = spell.get(f.endpointId);
    if (!s) spell.set(f.endpointId, { first: f.at, last: f, n: 1 });
    else {
      if (f.at < s.first) s.first = f.at;
      if (f.at >= s.last.at) s.last = f;
      s.n++;
    }
  }
  // Sets "failing since" where it was unset and counts the spell's failures until it is reported, and
  // reads "failing since" back, in one statement (the outer select sees the rows as they were, hence
  // the coalesce with what the update returned). A row whose spell is reported is not written again,
  // unless a re-enable cleared its "failing since" (the spell stays reported: its success announces it).
  const rows: {
    id: string;
    org_id: string;
    failing_since: Date | null;
    failing_attempts: number | null;
    reported_now: boolean;
  }[] = (
    await trx.raw(
      `with v as (select * from jsonb_to_recordset(?::jsonb) as v(id uuid, at timestamptz, last_at timestamptz, n int)),
            old as (select e.id, e.failing_reported_at from webhook_endpoints e join v on v.id = e.id
                      where e.failing_reported_at is null or e.failing_since is null
                      order by e.id for update of e),
            upd as (update webhook_endpoints e
                       set failing_since = coalesce(e.failing_since, v.at),
                           failing_attempts = case when e.failing_reported_at is null then e.failing_attempts + v.n
                                                   else e.failing_attempts end,
                           failing_reported_at = coalesce(e.failing_reported_at,
                                                          case when e.failing_attempts + v.n >= ? then v.last_at end)
                      from v join old on old.id = v.id where e.id = v.id
                    returning e.id, e.failing_since, e.failing_attempts,
                              old.failing_reported_at is null and e.failing_reported_at is not null as reported_now)
       select e.id, e.org_id, coalesce(upd.failing_since, e.failing_since) as failing_since, upd.failing_attempts,
              coalesce(upd.reported_now, false) as reported_now
         from v join webhook_endpoints e on e.id = v.id left join upd on upd.id = e.id`,
      [
        JSON.stringify(
          [...spell]
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([id, s]) => ({ id, at: s.first.toISOString(), last_at: s.last.at.toISOString(), n: s.n })),
        ),
        rules.failingAfterAttempts,
      ],
    )
  ).rows;
  await publishFailing(
    trx,
    rules.set,
    rows
      .filter((r) => r.reported_now)
      .map((r) => ({
        endpointId: r.id,
        orgId: r.org_id,
        failingSince: new Date(r.failing_since!),
        failedAttempts: Number(r.failing_attempts),
        reportedAt: spell.get(r.id)!.last.at,
        lastResponseStatus: spell.get(r.id)!.last.status,
      })),
  );
  const since = new Map(rows.map((r) => [r.id, r.failing_since ? new Date(r.failing_since) : null]));
  for (const f of failures) {
    if (disabled.has(f.endpointId) || !since.has(f.endpointId)) continue;
    const reason = disableReason(f.status, since.get(f.endpointId) ?? null, f.at, rules.failingPeriodMs);
    if (reason) disabled.set(f.endpointId, { reason, at: f.at });
  }
  return disabled;
}

const isOk = (status: number | null) => status !== null && status >= 200 && status < 300;
