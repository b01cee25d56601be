import type { EntityManager } from '@mikro-orm/postgresql';
import type { Subject } from '../domain/policy';
import type { IdentityChange } from './identity-change';

/** Who moves a KYC record: staff through the API, or the verification provider's signed notification. */
export type Mover = 'staff' | 'provider';

/**
 * The record a command names. Staff commands also carry `allow`, the policy's check of who the record
 * is about (domain/policy.ts), run on the locked record before anything changes.
 */
export interface Target {
  id: string;
  orgId?: string;
  allow?: (subject: Subject) => void;
}

export type KycView = Record<string, unknown> & { user_id: string; status: string };

/**
 * The KYC model of a behaviour set (spec §6.2): Set A keeps a case per user with attempts, Set B
 * keeps sessions. The routes and the provider notifications talk to this interface only.
 */
export interface KycModel {
  /** Every action staff or the provider may apply, for validation. */
  readonly actions: readonly [string, ...string[]];
  /** The investor starts verifying (again). */
  start(em: EntityManager, orgId: string, userId: string): Promise<IdentityChange<KycView>>;
  /**
   * Applies an action. Staff address the record they see (Set A: the case, Set B: the session)
   * within their organisation; the provider addresses what it verifies (Set A: the attempt).
   */
  apply(
    em: EntityManager,
    target: Target,
    action: string,
    by: Mover,
    reason?: string,
  ): Promise<IdentityChange<KycView>>;
  /** The user's current KYC record in the organisation, if any. */
  current(em: EntityManager, orgId: string, userId: string): Promise<KycView | null>;
}
