import { Agent, request } from 'undici';
import { AccessTokens } from '../../identity';
import type { Sink } from './sink';

/**
 * One organisation's staff member on the public API (Set A paths), as an integrator drives it:
 * registers endpoints at the sink and sends test events, each a `POST …/test` that goes through the
 * same publish path as every event.
 */
export async function apiSession(baseUrl: string, accessTokenKeyPem: string, sink: Sink) {
  const tokens = await AccessTokens.create({ privateKeyPem: accessTokenKeyPem, ttlSeconds: 3600 });
  // Many requests in flight on kept-alive connections, as a load generator should.
  const dispatcher = new Agent({ connections: 64, keepAliveTimeout: 60_000 });
  const call = async (
    token: string,
    method: 'POST' | 'PATCH',
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ) => {
    const res = await request(`${baseUrl}${path}`, {
      method,
      dispatcher,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra },
      body: body === undefined ? undefined : JSON.stringify(body),
      headersTimeout: 60_000,
    });
    const json = (await res.body.json()) as { data: Record<string, unknown> };
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json)}`);
    return json.data;
  };
  return {
    /** A staff member of `orgId` (a new organisation unless given). */
    async org(orgId: string = crypto.randomUUID()) {
      const token = await tokens.sign({
        userId: `staff-${orgId.slice(0, 8)}`,
        orgId,
        roles: ['staff'],
        kycCompleted: false,
      });
      return {
        orgId,
        /**
         * Registers `count` endpoints at the sink (`/h/` answers 200, `/f/` 500, `/hang/` never,
         * `/slow/` 200 after `answerAfterMs`), with the endpoint's own limits when given.
         */
        async endpoints(
          count: number,
          opts: {
            kind?: 'h' | 'f' | 'hang' | 'slow';
            eventTypes?: string[];
            answerAfterMs?: number;
            maxInFlight?: number;
            rateLimitPerSecond?: number;
            /** A payload filter (docs/decisions/0398-payload-filters.md). */
            filter?: unknown;
          } = {},
        ) {
          const ids: string[] = [];
          for (let i = 0; i < count; i++) {
            const hook = crypto.randomUUID();
            const data = await call(token, 'POST', '/notifications/webhook-endpoints', {
              url: `${sink.url}/${opts.kind ?? 'h'}/${hook}${opts.kind === 'slow' ? `?ms=${opts.answerAfterMs ?? 0}` : ''}`,
              eventTypes: opts.eventTypes ?? ['subscription.approved'],
              ...(opts.maxInFlight !== undefined && { maxInFlight: opts.maxInFlight }),
              ...(opts.rateLimitPerSecond !== undefined && { rateLimitPerSecond: opts.rateLimitPerSecond }),
              ...(opts.filter !== undefined && { filter: opts.filter }),
            });
            await sink.register(hook, String(data.signing_secret), orgId);
            ids.push(String(data.id));
          }
          return ids;
        },
        /** Disables the endpoint: what is still queued for it ends `failed`, with the reason (docs/decisions/0290). */
        async disable(endpointId: string): Promise<void> {
          await call(token, 'PATCH', `/notifications/webhook-endpoints/${endpointId}`, { status: 'disabled' });
        },
        /** One test.ping to the endpoint: answers its event id once the API has answered (202). */
        async ping(endpointId: string, idempotencyKey?: string): Promise<string> {
          const headers: Record<string, string> = idempotencyKey ? { 'idempotency-key': idempotencyKey } : {};
          const data = await call(
            token,
            'POST',
            `/notifications/webhook-endpoints/${endpointId}/test`,
            undefined,
            headers,
          );
          return String(data.event_id);
        },
      };
    },
    close: () => dispatcher.close(),
  };
}

export type ApiOrg = Awaited<ReturnType<Awaited<ReturnType<typeof apiSession>>['org']>>;
