/**
 * An endpoint's circuit breaker (docs/decisions/0179-circuit-breaker.md): after `failures` answers in a row
 * that say the endpoint cannot take deliveries, it opens; while open, nothing is sent to it but one probe per
 * cool-down; the probe's success closes it, its failure opens it again for twice as long. Pure rules, so the
 * engine applies them and tests state them without a clock or a database.
 */

export type CircuitState = 'closed' | 'open' | 'half_open';

export interface Circuit {
  state: CircuitState;
  consecutiveFailures: number;
  /** Openings since the last close; each doubles the cool-down. */
  openCount: number;
  openedAt: Date | null;
  /** Open: when the next probe may go. Half open: until when the probe in flight holds the circuit. */
  probeAt: Date | null;
}

export interface CircuitRules {
  /** Failures in a row that open the circuit. */
  failures: number;
  /** The first cool-down; each reopening doubles it, up to `maxCooldownMs`. */
  cooldownMs: number;
  maxCooldownMs: number;
}

/** @internal exported for its tests */
export const CLOSED: Circuit = { state: 'closed', consecutiveFailures: 0, openCount: 0, openedAt: null, probeAt: null };

/**
 * An answer that took this long, most of an attempt's 30 s (spec §6.5), counts against the
 * endpoint's health as a timeout does, whatever its status: a 2xx that comes just before the
 * timeout holds a slot as long as a timeout and would otherwise never open the circuit
 * (docs/decisions/0309-slots-taken-at-the-post.md). The delivery itself is still a success.
 */
const SLOW_ANSWER_MS = 20_000;

/** Whether an answer this long in coming counts as no answer for the endpoint's health. */
export const tooSlow = (durationMs: number | null | undefined): boolean => (durationMs ?? 0) >= SLOW_ANSWER_MS;

/**
 * Whether an answer counts against the circuit: no answer at all (timeout, refused, reset), a 5xx,
 * a 408 or a 429, or any answer that took most of the 30 s (SLOW_ANSWER_MS). Any other answer, a
 * 4xx included, shows an endpoint that is up and answering.
 */
export function countsAsOutage(status: number | null, durationMs?: number | null): boolean {
  return status === null || status >= 500 || status === 408 || status === 429 || tooSlow(durationMs);
}

/** The circuit after these answers, in the order they came (true: the endpoint is up). */
export function observe(circuit: Circuit, answers: readonly boolean[], now: Date, rules: CircuitRules): Circuit {
  let c = circuit;
  for (const up of answers) {
    if (up) {
      c = CLOSED;
      continue;
    }
    const failures = c.consecutiveFailures + 1;
    const opens = c.state === 'half_open' || (c.state === 'closed' && failures >= rules.failures);
    if (!opens) {
      c = { ...c, consecutiveFailures: failures };
      continue;
    }
    const openCount = c.openCount + 1;
    const cooldown = Math.min(rules.maxCooldownMs, rules.cooldownMs * 2 ** (openCount - 1));
    c = {
      state: 'open',
      consecutiveFailures: failures,
      openCount,
      openedAt: now,
      probeAt: new Date(now.getTime() + cooldown),
    };
  }
  return c;
}

/** What may be sent to an endpoint now: everything, one probe, or nothing. */
export function admission(circuit: Pick<Circuit, 'state' | 'probeAt'>, now: Date): 'send' | 'probe' | 'hold' {
  if (circuit.state === 'closed') return 'send';
  // Half open past its hold: the probe in flight was lost with its worker, so another may go.
  return circuit.probeAt !== null && circuit.probeAt.getTime() <= now.getTime() ? 'probe' : 'hold';
}

/** How long a probe holds a half-open circuit: an attempt's 30 s (spec §6.5) and its record. */
export const PROBE_HOLD_MS = 60_000;
