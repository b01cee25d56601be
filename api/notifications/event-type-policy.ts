import { badRequest } from '../../lib/errors';
import { supportedEventTypes } from '../../domain/events';
import type { BehaviourSet } from '../../lib/behaviour-set';

const ALL_EVENTS = '*';

/**
 * spec §4.3: subscribed types must be in the set's list (§6.2); an unknown one is a 400 that lists
 * the valid ones. "*" subscribes to all and absorbs any other entry.
 */
export function checkEventTypes(set: BehaviourSet, requested: readonly string[]): string[] {
  const valid = supportedEventTypes(set);
  const unknown = requested.filter((t) => t !== ALL_EVENTS && !valid.includes(t));
  if (unknown.length) {
    throw badRequest(
      'UNKNOWN_EVENT_TYPE',
      `Unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`,
      {
        unknown,
        valid: [ALL_EVENTS, ...valid],
      },
    );
  }
  return requested.includes(ALL_EVENTS) ? [ALL_EVENTS] : [...new Set(requested)];
}
