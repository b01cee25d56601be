import type { Knex } from '@mikro-orm/postgresql';
import { summary } from './stats';

/**
 * Where the paced phase's latency goes, per event, from the rows' own clocks: publish -> committed
 * (the outbox insert), -> planned (delivery rows), -> first batch started (attempt 1's time, set by
 * the batcher when it takes the batch), -> first arrival at the sink.
 */
export async function pacedStages(
  knex: Knex,
  orgId: string,
  published: Map<string, number>,
  arrivals: Record<string, number>,
) {
  const rows: { id: string; committed: Date; planned: Date; attempted: Date }[] = (
    await knex.raw(
      `select ev.id, ev.created_at as committed, min(d.created_at) as planned, min(a.attempted_at) as attempted
         from events ev join webhook_deliveries d on d.event_id = ev.id join webhook_attempts a on a.delivery_id = d.id and a.number = 1
        where ev.org_id = ? group by ev.id, ev.created_at`,
      [orgId],
    )
  ).rows;
  const commit: number[] = [],
    plan: number[] = [],
    batch: number[] = [],
    post: number[] = [];
  for (const r of rows) {
    const t0 = published.get(r.id);
    const arrived = arrivals[r.id];
    if (t0 === undefined || arrived === undefined) continue;
    commit.push(new Date(r.committed).getTime() - t0);
    plan.push(new Date(r.planned).getTime() - new Date(r.committed).getTime());
    batch.push(new Date(r.attempted).getTime() - new Date(r.planned).getTime());
    post.push(arrived - new Date(r.attempted).getTime());
  }
  return {
    to_commit: summary(commit),
    commit_to_planned: summary(plan),
    planned_to_batch: summary(batch),
    batch_to_arrival: summary(post),
  };
}
