/**
 * Where an investor's own words sit in what the service keeps about a subscription, and which of
 * them are still in clear (docs/decisions/0381-erasure-complete.md): in its state (the workflow's and
 * the projection's), and in the events (and delivery bodies) made from it. A value is "kept" once it
 * is sealed under the investor's key or is a marker (lib/personal-markers.ts); a value written
 * before sealing existed is in clear, and `npm run personal-data -- reseal` or an erasure seals it.
 * Pure: bundled into workflow code.
 */
import { isKept } from '../lib/personal-markers';
import { INFO_PROVIDED } from './events';
import type { SubscriptionState } from './subscription';

/** The personal fields of a subscription's state: one entry per information exchange, null while unanswered. */
export interface PersonalFields {
  signature: string | null;
  signerIp: string | null;
  accreditationStatus: string | null;
  answers: ({ message: string; documentReferences: string[] } | null)[];
}

export function personalFieldsOf(s: SubscriptionState): PersonalFields {
  return {
    signature: s.signature,
    signerIp: s.signerIp,
    accreditationStatus: s.accreditationStatus,
    answers: (s.infoExchanges ?? []).map((x) =>
      x.answer ? { message: x.answer.message, documentReferences: x.answer.documentReferences } : null,
    ),
  };
}

const clear = (v: string | null | undefined): v is string => typeof v === 'string' && !isKept(v);

/** How many values of `f` are still in clear. */
export function clearCount(f: PersonalFields): number {
  let n = [f.signature, f.signerIp, f.accreditationStatus].filter(clear).length;
  for (const a of f.answers) if (a) n += [a.message, ...a.documentReferences].filter(clear).length;
  return n;
}

/** `f` with each value still in clear replaced by `keep(value)` (sealed, or the erased marker). */
export function keepClear(f: PersonalFields, keep: (clear: string) => string): PersonalFields {
  const k = (v: string | null) => (clear(v) ? keep(v) : v);
  return {
    signature: k(f.signature),
    signerIp: k(f.signerIp),
    accreditationStatus: k(f.accreditationStatus),
    answers: f.answers.map((a) =>
      a ? { message: k(a.message)!, documentReferences: a.documentReferences.map((d) => k(d)!) } : null,
    ),
  };
}

/**
 * The state with the kept values of `kept` put where the state still holds a value in clear, and
 * nowhere else: a field sealed since, or changed, is left as it is. The state itself when nothing changes.
 */
export function withKeptFields(s: SubscriptionState, kept: PersonalFields): SubscriptionState {
  const pick = (now: string | null, given: string | null | undefined) =>
    clear(now) && typeof given === 'string' && isKept(given) ? given : now;
  let changed = false;
  const take = (now: string | null, given: string | null | undefined) => {
    const v = pick(now, given);
    if (v !== now) changed = true;
    return v;
  };
  const signature = take(s.signature, kept.signature);
  const signerIp = take(s.signerIp, kept.signerIp);
  const accreditationStatus = take(s.accreditationStatus, kept.accreditationStatus);
  const infoExchanges = s.infoExchanges?.map((x, i) => {
    const given = kept.answers[i];
    if (!x.answer || !given || given.documentReferences.length !== x.answer.documentReferences.length) return x;
    const message = take(x.answer.message, given.message)!;
    const documentReferences = x.answer.documentReferences.map((d, j) => take(d, given.documentReferences[j])!);
    return { ...x, answer: { ...x.answer, message, documentReferences } };
  });
  if (!changed) return s;
  return {
    ...s,
    signature,
    signerIp,
    accreditationStatus,
    ...(infoExchanges ? { infoExchanges } : {}),
  };
}

/**
 * An event's data with each personal value still in clear replaced by `keep(value)`, and how many
 * were: a subscription event carries the subscription's view (its answers under `info_requests`),
 * and the answer's own event its message and references at the top.
 */
export function keepClearInEvent(
  type: string,
  data: Record<string, unknown>,
  keep: (clear: string) => string,
): { data: Record<string, unknown>; kept: number } {
  let kept = 0;
  const k = (v: unknown) => {
    if (!clear(v as string | null)) return v;
    kept += 1;
    return keep(v as string);
  };
  const list = (v: unknown) => (Array.isArray(v) ? v.map(k) : v);
  let out = data;
  if (Array.isArray(data.info_requests)) {
    const requests = (data.info_requests as Record<string, unknown>[]).map((r) => {
      const answer = r?.answer as Record<string, unknown> | null | undefined;
      if (!answer) return r;
      return {
        ...r,
        answer: { ...answer, message: k(answer.message), document_references: list(answer.document_references) },
      };
    });
    out = { ...out, info_requests: requests };
  }
  if (type === INFO_PROVIDED) {
    out = { ...out, message: k(data.message), document_references: list(data.document_references) };
  }
  return kept === 0 ? { data, kept } : { data: out, kept };
}
