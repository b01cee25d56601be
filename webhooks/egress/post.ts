import { Agent, request } from 'undici';
import { guardedLookup, refusedLiteral, type SsrfRefusedError, type SsrfPolicy } from '../../lib/runtime/ssrf-guard';
import type { HostResolver } from '../../lib/runtime/dns-resolver';
import type { SignedRequest } from '../secrets/signing';
import { cutToCodePoints } from '../../lib/text';
import { proxiedConnector, type EgressRoute } from './proxy-connect';

/** spec §6.5 / §8: an endpoint answers within 30 s or the attempt failed. */
const ATTEMPT_TIMEOUT_MS = 30_000;
/** What an attempt record keeps of the response body. */
const RESPONSE_BODY_LIMIT = 4096;
/** Response headers the schedule may act on (Retry-After on 429/503). */
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
 * One connection pool for every attempt of the process; its lookup (the process's resolver, off the
 * libuv pool) refuses addresses the policy forbids, so a name that re-resolves to a private address
 * after registration is still not reached. With an egress proxy (`route`), its connections are
 * tunnels opened by webhooks/egress/proxy-connect.ts, under the same guard; without one, nothing changes.
 */
export function connectionFor(policy: SsrfPolicy, resolver: HostResolver, route?: EgressRoute): Connection {
  return {
    policy,
    dispatcher: new Agent({
      connect: route
        ? proxiedConnector({ route, policy, resolver })
        : { lookup: guardedLookup(policy, resolver), timeout: 10_000 },
      connections: 128,
    }),
  };
}

/**
 * One attempt's POST, on undici's `request` (its `fetch` cost the worker about twice the CPU per
 * delivery in the benchmark's profile: web streams, a Request object, a Response object each). A
 * redirect is not followed (it counts as a non-2xx answer); the body is read up to the limit only.
 * Its 30 s timer is cleared when the attempt ends: `AbortSignal.timeout`'s cannot be, so each attempt's
 * timer and signal outlived it by 30 s, into the old generation (docs/decisions/0349-engine-tail-is-warm-up-and-gc.md).
 */
export async function post(url: string, req: SignedRequest, via: Connection): Promise<PostResult> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(timeoutError()), ATTEMPT_TIMEOUT_MS);
  try {
    refuseLiteral(url, via.policy); // a literal IP never reaches the guarded lookup
    const res = await request(url, {
      method: 'POST',
      headers: req.headers,
      body: req.body,
      dispatcher: via.dispatcher,
      signal: abort.signal,
    });
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = res.headers[name];
      if (value !== undefined) headers[name] = cutToCodePoints(String(value), 200);
    }
    const body = await readCapped(res.body, RESPONSE_BODY_LIMIT);
    return { status: res.statusCode, body, headers, error: null, durationMs: took() };
  } catch (err) {
    const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
    const reason =
      e.name === 'TimeoutError'
        ? `timed out after ${ATTEMPT_TIMEOUT_MS / 1000} s`
        : (e.code ?? e.cause?.code ?? e.cause?.message ?? e.message);
    return {
      status: null,
      body: null,
      headers: null,
      error: cutToCodePoints(printable(String(reason)), 500),
      durationMs: took(),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** What the aborted request throws: named as `AbortSignal.timeout`'s reason is, so the record says "timed out". */
function timeoutError(): Error {
  const e = new Error('attempt timed out');
  e.name = 'TimeoutError';
  return e;
}

/**
 * The connect-time lookup guards names; a literal address in the URL is checked here. The verdict
 * depends on the URL alone, so it is kept (bounded) rather than re-parsed on every attempt.
 */
const literalVerdicts = new Map<string, SsrfRefusedError | null>();
export function refuseLiteral(url: string, policy: SsrfPolicy): void {
  const key = `${policy.allowLoopback ? 1 : 0}${policy.allowPrivate ? 1 : 0}${url}`;
  let verdict = literalVerdicts.get(key);
  if (verdict === undefined) {
    verdict = refusedLiteral(url, policy);
    if (literalVerdicts.size >= 10_000) literalVerdicts.clear();
    literalVerdicts.set(key, verdict);
  }
  if (verdict) throw verdict;
}

export async function readCapped(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  limit: number,
): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size >= limit) break; // leaving the loop destroys the rest of the body
    }
  } catch {
    // A body cut off mid-way still tells the story up to that point.
  } finally {
    body.destroy();
  }
  const text = printable(Buffer.concat(chunks).subarray(0, limit).toString('utf8'));
  return text.length ? text : null;
}

// PostgreSQL text cannot hold U+0000: an endpoint answering one must not wedge the record.
const printable = (s: string) => s.replace(/\u0000/g, '');
