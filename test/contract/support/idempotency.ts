import { randomUUID } from 'node:crypto';
import type { BehaviourSet } from '../../../lib/behaviour-set';
import { startService, type TestService } from '../../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../../support/subscriptions';

/**
 * What the Idempotency-Key suites share (docs/decisions/0113-idempotency-key-every-post.md): the first
 * answer is replayed for the same key and body, another body is 409, and a command the workflow
 * did not answer in time (503) gets its real result when retried with the same key.
 */
export const SUCCESS = 'https://investor.example/done';
export const CANCEL = 'https://investor.example/cancelled';
export const key = () => `key-${randomUUID()}`;
export const withKey = (k: string) => ({ 'idempotency-key': k });
export const path = (id: string, op: string) => `/issuance/subscriptions/${id}/${op}`;

/**
 * A set's service and a subscription world in it. Set A's commands time out after 10 s: short enough that
 * a stopped worker turns a command into a 503 within a test.
 */
export async function startCommandWorld(set: BehaviourSet): Promise<{ svc: TestService; w: LifecycleWorld }> {
  const svc = await startService(set === 'A' ? { set, env: { COMMAND_TIMEOUT_MS: '10000' } } : { set });
  try {
    return { svc, w: await lifecycleWorld(svc) };
  } catch (err) {
    await svc.stop();
    throw err;
  }
}

/** The subscription's events of one type. */
export const eventsOf = async (w: LifecycleWorld, id: string, type: string) =>
  (await w.events(id)).filter((e) => e.type === type);
