import { Agent, fetch } from 'undici';
import type { Orm } from '../db/orm';
import { recordWebhookAttempt, recordWebhookDelivery } from '../lib/metrics';
import { assertDeliverableUrl, guardedLookup, type SsrfPolicy } from '../lib/ssrf-guard';
import type { AttemptInput, AttemptResult } from '../workflows/webhook-messages';
import type { SecretBox } from './webhook-secret-box';
import { endpointKeys, signedRequest } from './webhook-signing';

/** spec §6.5 / §8: an endpoint answers within 30 s or the attempt failed. */
export const ATTEMPT_TIMEOUT_MS = 30_000;
/** What an attempt record keeps of the response body. */
export const RESPONSE_BODY_LIMIT = 4096;
const AUTOMATIC_ATTEMPTS = 8;

interface Target {
  event_id: string;
  event_type: string;
  status: string;
  endpoint_id: string;
  url: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
  deleted_at: Date | null;
  body: string;
  occurred_at: Date;
}

/**
 * One delivery attempt (spec §6.3–§6.5): the stored body, signed with the endpoint's CURRENT
 * secret (a rotation mid-schedule signs the next attempt with the new one), POSTed with a 30 s
 * limit; the attempt and the delivery's new status are recorded in one transaction. It throws only
 * when the database fails; every HTTP outcome is a result.
 */
export function createAttemptActivities(deps: { orm: Orm; secrets: () => SecretBox; ssrf: () => SsrfPolicy }) {
  let box: SecretBox | undefined;
  let agent: { dispatcher: Agent; policy: SsrfPolicy } | undefined;
  // One connection pool for every attempt; its lookup refuses addresses the policy forbids, so a
  // name that re-resolves to a private address after registration is still not reached.
  const connection = () => {
    if (!agent) {
      const policy = deps.ssrf();
      agent = { policy, dispatcher: new Agent({ connect: { lookup: guardedLookup(policy), timeout: 10_000 } }) };
    }
    return agent;
  };
  return {
    async attemptDelivery(input: AttemptInput): Promise<AttemptResult> {
      const knex = deps.orm.em.getConnection().getKnex();
      const target: Target | undefined = await knex('webhook_deliveries as d')
        .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .join('webhook_event_bodies as b', 'b.event_id', 'd.event_id')
        .join('events as ev', 'ev.id', 'd.event_id')
        .where('d.id', input.deliveryId)
        .first('d.event_id', 'd.event_type', 'd.status', 'd.endpoint_id', 'e.url', 'e.secret_ciphertext', 'e.previous_secret_ciphertext', 'e.previous_secret_expires_at', 'e.deleted_at', 'b.body', 'ev.occurred_at');
      if (!target) throw new Error(`delivery ${input.deliveryId} is not recorded`);
      if (target.deleted_at) {
        await knex('webhook_deliveries').where({ id: input.deliveryId }).update({ next_attempt_at: null, updated_at: knex.fn.now() });
        recordWebhookDelivery('endpoint_deleted');
        return { outcome: 'endpoint_deleted', responseStatus: null };
      }
      if (target.status === 'success') return { outcome: 'success', responseStatus: null };

      const request = signedRequest(endpointKeys((box ??= deps.secrets()), target), target.body, {
        eventId: target.event_id,
        eventType: target.event_type,
        deliveryId: input.deliveryId,
        timestamp: new Date(target.occurred_at).toISOString(),
      });
      const started = performance.now();
      const response = await post(target.url, request, connection());
      const durationMs = Math.round(performance.now() - started);
      const ok = response.status !== null && response.status >= 200 && response.status < 300;
      const status = ok ? 'success' : input.number >= AUTOMATIC_ATTEMPTS ? 'exhausted' : 'failed';
      const attemptedAt = new Date(input.attemptedAt);

      await knex.transaction(async (trx) => {
        const attempt = {
          delivery_id: input.deliveryId,
          number: input.number,
          attempted_at: attemptedAt,
          duration_ms: durationMs,
          response_status: response.status,
          response_body: response.body,
          error: response.error,
        };
        // A replayed attempt (worker died before the workflow recorded it) overwrites its own row.
        await trx('webhook_attempts').insert(attempt).onConflict(['delivery_id', 'number']).merge();
        await trx('webhook_deliveries')
          .where({ id: input.deliveryId })
          .update({
            status,
            attempt_count: trx.raw('greatest(attempt_count, ?)', [input.number]),
            last_attempt_at: attemptedAt,
            next_attempt_at: !ok && input.nextDelayMs !== null ? new Date(attemptedAt.getTime() + durationMs + input.nextDelayMs) : null,
            updated_at: trx.fn.now(),
          });
      });
      recordWebhookAttempt(ok ? 'success' : 'failed', response.status);
      if (ok) recordWebhookDelivery('success', target.occurred_at);
      else if (status === 'exhausted') recordWebhookDelivery('exhausted');
      return { outcome: ok ? 'success' : 'failed', responseStatus: response.status };
    },
  };
}

interface PostResult {
  status: number | null;
  body: string | null;
  error: string | null;
}

/** A redirect is not followed (it counts as a non-2xx answer); the body is read up to the limit only. */
async function post(url: string, req: { headers: Record<string, string>; body: string }, via: { dispatcher: Agent; policy: SsrfPolicy }): Promise<PostResult> {
  const signal = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
  try {
    await assertDeliverableUrl(url, via.policy); // a literal IP never reaches the guarded lookup
    const res = await fetch(url, { method: 'POST', headers: req.headers, body: req.body, redirect: 'manual', signal, dispatcher: via.dispatcher });
    return { status: res.status, body: await readCapped(res, RESPONSE_BODY_LIMIT), error: null };
  } catch (err) {
    const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
    const reason = e.name === 'TimeoutError' ? `timed out after ${ATTEMPT_TIMEOUT_MS / 1000} s` : (e.cause?.code ?? e.code ?? e.cause?.message ?? e.message);
    return { status: null, body: null, error: String(reason).slice(0, 500) };
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
  const text = Buffer.concat(chunks).subarray(0, limit).toString('utf8');
  return text.length ? text : null;
}
