/**
 * An endpoint's rate limit (docs/decisions/0178-endpoint-rate-limit.md): at most `perSecond` deliveries in
 * any one second, none dropped. Deliveries start evenly spaced, each reserving its start time, so no burst
 * ever exceeds the limit. Pure rules; the engine keeps the next free start per endpoint in PostgreSQL.
 */

/**
 * The spacing of an endpoint's deliveries, 2% over 1/perSecond. Spacing alone cannot keep a
 * receiver's count of any one second within the limit when arrivals bunch under load: the
 * engine also starts none earlier than a second after the one `perSecond` places before ended
 * (webhooks/attempts/endpoint-pacer.ts).
 */
export const spacingMs = (perSecond: number): number => 1020 / perSecond;

/** How far ahead one dispatch round reserves an endpoint's start times. */
export const PACING_HORIZON_MS = 250;

/**
 * What may be reserved now: `count` deliveries, the first `waitMs` from now (the endpoint's next
 * free start) and each following one `spacingMs` later; or none, and how long until there is one.
 */
export function pace(waitMs: number, perSecond: number): { count: number; waitMs: number } {
  const wait = Math.max(0, waitMs);
  if (wait > PACING_HORIZON_MS) return { count: 0, waitMs: wait - PACING_HORIZON_MS };
  return { count: Math.floor((PACING_HORIZON_MS - wait) / spacingMs(perSecond)) + 1, waitMs: wait };
}
