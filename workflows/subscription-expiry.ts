/**
 * When an unsigned subscription expires (docs/decisions/0368-unsigned-drafts-expire.md). Pure: the
 * workflow passes its own clock in. A subscription holds its deadline from creation
 * (`draftExpiresAt`, SUBSCRIPTION_DRAFT_TTL after it); one created before drafts expired holds none
 * until the commitment sweep gives it one (the `draftDeadline` signal).
 */
import { EXPIRES_UNSIGNED, type SubscriptionState } from '../domain/subscription';

/** Its deadline while unsigned: its own, else the one the sweep gave; null when none applies. */
export function unsignedDeadline(s: SubscriptionState, given: string | null): number | null {
  if (!EXPIRES_UNSIGNED.includes(s.status)) return null;
  const deadline = s.draftExpiresAt ?? given;
  return deadline ? Date.parse(deadline) : null;
}

/** Unsigned and at or past its deadline. */
export function expiryDue(s: SubscriptionState, given: string | null, nowMs: number): boolean {
  const deadline = unsignedDeadline(s, given);
  return deadline !== null && nowMs >= deadline;
}
