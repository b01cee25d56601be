import type { Knex } from '@mikro-orm/postgresql';

/**
 * The reseal of personal fields written in clear before they were sealed (migration 0096,
 * docs/decisions/0384-resealing-fields-written-in-clear.md): the pending request migration 0096 makes,
 * taken by one process at a time under a lease; and the subscriptions whose workflow history still
 * holds such fields (residues), which no reseal reaches and an erasure reports.
 */
const RESEAL = 'fields-written-in-clear';

/** Takes the pending reseal for `leaseSeconds`; false when it is finished or another process holds it. */
export async function leasePendingReseal(knex: Knex, leaseSeconds: number): Promise<boolean> {
  const taken = await knex('personal_data_reseals')
    .where({ id: RESEAL })
    .whereNull('finished_at')
    .where((q) => q.whereNull('leased_until').orWhere('leased_until', '<', knex.fn.now()))
    .update({ leased_until: knex.raw('now() + make_interval(secs => ?)', [leaseSeconds]) });
  return taken > 0;
}

/** Records a pass: finished when nothing was left in clear, else pending again (its lease let go). */
export async function endResealPass(knex: Knex, outcome: { finished: boolean; report: unknown }): Promise<void> {
  await knex('personal_data_reseals')
    .where({ id: RESEAL })
    .update({
      leased_until: null,
      outcome: JSON.stringify(outcome.report),
      ...(outcome.finished ? { finished_at: knex.fn.now() } : {}),
    });
}

/** A subscription's history holds its investor's words in clear (written before sealing). */
export async function noteResidue(
  knex: Knex,
  r: { subscriptionId: string; orgId: string; userId: string },
): Promise<void> {
  await knex('personal_data_residues')
    .insert({ subscription_id: r.subscriptionId, org_id: r.orgId, user_id: r.userId })
    .onConflict('subscription_id')
    .ignore();
}

export async function residuesOf(knex: Knex, orgId: string, userId: string): Promise<string[]> {
  const rows: { subscription_id: string }[] = await knex('personal_data_residues')
    .where({ org_id: orgId, user_id: userId })
    .select('subscription_id');
  return rows.map((r) => r.subscription_id);
}

/** Its history is gone (Temporal's retention removed it): nothing of it is left to report. */
export async function forgetResidue(knex: Knex, subscriptionId: string): Promise<void> {
  await knex('personal_data_residues').where({ subscription_id: subscriptionId }).delete();
}
