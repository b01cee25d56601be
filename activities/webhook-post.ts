import { Agent, fetch } from 'undici';
import { assertDeliverableUrl, guardedLookup, type SsrfPolicy } from '../lib/ssrf-guard';
import type { SignedRequest } from './webhook-signing';

/** spec §6.5 / §8: an endpoint answers within 30 s or the attempt failed. */
export const ATTEMPT_TIMEOUT_MS = 30_000;
/** What an attempt record keeps of the response body. */
export const RESPONSE_BODY_LIMIT = 4096;
/** Response headers the schedule may act on (issue 12: Retry-After on 429/503). */
const KEPT_HEADERS = ['retry-after'];

export interface PostResult {
  status: number | null;
  body: string | null;
  headers: Record<string, string> | null;
  error: string | null;
  durationMs: number;
}

export interface Connection {
  dispatcher: Agent;
  policy: SsrfPolicy;
}

/**
 * One connection pool for every attempt of the process; its lookup refuses addresses the policy
 * forbids, so a name that re-resolves to a private address after registration is still not reached.
 */
export function connectionFor(policy: SsrfPolicy): Connection {
  return { policy, dispatcher: new Agent({ connect: { lookup: guardedLookup(policy), timeout: 10_000 }, connections: 128 }) };
}

/** A redirect is not followed (it counts as a non-2xx answer); the body is read up to the limit only. */
export async function post(url: string, req: SignedRequest, via: Connection): Promise<PostResult> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const signal = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
  try {
    await assertDeliverableUrl(url, via.policy); // a literal IP never reaches the guarded lookup
    const res = await fetch(url, { method: 'POST', headers: req.headers, body: req.body, redirect: 'manual', signal, dispatcher: via.dispatcher });
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = res.headers.get(name);
      if (value !== null) headers[name] = value.slice(0, 200);
    }
    const body = await readCapped(res, RESPONSE_BODY_LIMIT);
    return { status: res.status, body, headers, error: null, durationMs: took() };
  } catch (err) {
    const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
    const reason = e.name === 'TimeoutError' ? `timed out after ${ATTEMPT_TIMEOUT_MS / 1000} s` : (e.cause?.code ?? e.code ?? e.cause?.message ?? e.message);
    return { status: null, body: null, headers: null, error: printable(String(reason)).slice(0, 500), durationMs: took() };
  }
}

async function readCapped(res: { body: ReadableStream<Uint8Array> | null }, limit: number): Promise<string | null> {
  if (!res.body) return null;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body cut off mid-way still tells the story up to that point.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const text = printable(Buffer.concat(chunks).subarray(0, limit).toString('utf8'));
  return text.length ? text : null;
}

// PostgreSQL text cannot hold U+0000: an endpoint answering one must not wedge the record.
const printable = (s: string) => s.replace(/\u0000/g, '');
