/**
 * When a webhook endpoint's answers change its status
 * (docs/decisions/0165-auto-disable-retry-after-rules.md). Pure rules, so the delivery engine applies them
 * and tests state them without a clock or a database.
 */

/** Why an endpoint was disabled: a 410 Gone, every attempt failing too long, or a person. */
export type DisableReason = 'gone' | 'failing' | 'manual';

/** Whether an endpoint's answers disable it: a 410 Gone at once, or failing every attempt for `periodMs`. */
export function disableReason(
  status: number | null,
  since: Date | null,
  now: Date,
  periodMs: number,
): DisableReason | null {
  if (status === 410) return 'gone';
  if (since && now.getTime() - since.getTime() >= periodMs) return 'failing';
  return null;
}
