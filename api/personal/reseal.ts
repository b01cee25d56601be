import type { Client } from '@temporalio/client';
import { forgetResidue, residuesOf } from '../../db/personal-reseal';
import type { Orm } from '../../db/orm';
import type { Config } from '../../lib/runtime/config';
import { keepClearFileNames } from '../../identity';
import { keepClearInEvents, type KeeperOf } from '../../webhooks';
import { historyKept, keepClearInSubscriptions } from './reseal-subscriptions';
import { investorSealer } from './sealing';

export interface ResealDeps {
  orm: Orm;
  temporal: Client;
  config: Pick<Config, 'PERSONAL_DATA_KEYS' | 'COMMAND_TIMEOUT_MS'>;
}

/** The places an investor's words are kept, as an erasure names them (docs/decisions/0381-erasure-complete.md). */
type Place = 'subscriptions' | 'events' | 'webhook_event_bodies' | 'accreditation_documents' | 'workflow_histories';

/** How many in one place: values in a subscription's state; rows elsewhere; subscriptions for workflow histories. */
interface PlaceCount {
  place: Place;
  count: number;
}

export interface ResealReport {
  /** What was in clear and is now sealed (or, for an erased investor, the erased marker). */
  sealed: PlaceCount[];
  /** What is still in clear afterwards. */
  unreached: PlaceCount[];
}

/**
 * Seals every personal field written in clear before fields were sealed at the door
 * (docs/decisions/0384-resealing-fields-written-in-clear.md) under its investor's key, or, for an
 * investor already erased, replaces it by the erased marker: in subscriptions (the running workflow's
 * state and the projection), subscription events and their delivery bodies, and accreditation
 * documents' file names. `only` narrows it to one investor (an erasure). Idempotent: a value sealed is
 * never touched again; `batch` rows a statement. The report says what is still in clear afterwards,
 * and (for one investor) which subscriptions' workflow histories still hold it.
 */
export async function resealPersonalData(
  deps: ResealDeps,
  opts: { batch?: number; only?: { orgId: string; userId: string } } = {},
): Promise<ResealReport> {
  const knex = deps.orm.em.getConnection().getKnex();
  const sealerOf = investorSealer(deps);
  const keepers = new Map<string, Promise<(clear: string) => string>>();
  // One key read per investor a pass meets.
  const keeperOf: KeeperOf = (orgId, userId) => {
    const id = `${orgId}\n${userId}`;
    let keeper = keepers.get(id);
    if (!keeper) {
      keeper = sealerOf({ orgId, userId }).then((s) => s.seal);
      keepers.set(id, keeper);
    }
    return keeper;
  };
  const only = opts.only;
  const batch = opts.batch ?? 500;
  const scope = { orgId: only?.orgId, userId: only?.userId };
  const temporal = { knex, temporal: deps.temporal, commandTimeoutMs: deps.config.COMMAND_TIMEOUT_MS };

  const subscriptions = await keepClearInSubscriptions(temporal, scope, keeperOf, batch);
  const events = await keepClearInEvents(knex, { orgId: only?.orgId, investorId: only?.userId }, keeperOf, batch);
  const documents = await keepClearFileNames(knex, scope, keeperOf, batch);
  // What is left: counted again, as a reader of the tables would find it.
  const left = await keepClearInEvents(knex, { orgId: only?.orgId, investorId: only?.userId }, null, batch);
  const unreached: PlaceCount[] = [
    { place: 'subscriptions', count: subscriptions.unreached },
    { place: 'events', count: left.events },
    { place: 'webhook_event_bodies', count: left.webhook_event_bodies },
    { place: 'accreditation_documents', count: await keepClearFileNames(knex, scope, null, batch) },
  ];
  if (only) unreached.push({ place: 'workflow_histories', count: await historiesHolding(deps, only) });
  const sealed: PlaceCount[] = [
    { place: 'subscriptions', count: subscriptions.kept },
    { place: 'events', count: events.events },
    { place: 'webhook_event_bodies', count: events.webhook_event_bodies },
    { place: 'accreditation_documents', count: documents },
  ];
  const some = (list: PlaceCount[]) => list.filter((p) => p.count > 0);
  return { sealed: some(sealed), unreached: some(unreached) };
}

/** The investor's subscriptions whose workflow history still holds their words in clear; a removed history is forgotten. */
async function historiesHolding(deps: ResealDeps, who: { orgId: string; userId: string }): Promise<number> {
  const knex = deps.orm.em.getConnection().getKnex();
  let held = 0;
  for (const id of await residuesOf(knex, who.orgId, who.userId)) {
    if (await historyKept({ temporal: deps.temporal, commandTimeoutMs: deps.config.COMMAND_TIMEOUT_MS }, id)) held += 1;
    else await forgetResidue(knex, id);
  }
  return held;
}
