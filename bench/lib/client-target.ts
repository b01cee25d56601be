import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import type { Sink } from './sink';

/**
 * The system under test as one integrator sees it, through its public API only: organisations (Svix:
 * applications), endpoints at the bench's sink, and one message published to one endpoint at a time. The client
 * benchmark drives Tranche (any commit that `npm start` runs) and Svix through this one shape
 * (docs/decisions/0393-client-benchmark-and-request-timing.md).
 */
export interface ClientTarget {
  readonly system: 'tranche' | 'svix';
  org(): Promise<TargetOrg>;
  close(): Promise<void>;
}

export interface TargetOrg {
  /** The organisation its receipts are counted for at the sink. */
  readonly id: string;
  /** An endpoint at the sink that answers 200 at once (`h`) or never (`hang`). */
  endpoint(kind: 'h' | 'hang'): Promise<string>;
  /** One message to the endpoint, with an Idempotency-Key of its own, as a careful client sends it. */
  publish(endpointId: string): Promise<Published>;
  disable(endpointId: string): Promise<void>;
}

interface Published {
  /** The id the sink records the message's arrival under. */
  eventId: string;
  /** The API's per-layer timing, when it sends one (API_REQUEST_TIMING, lib/runtime/request-timing.ts). */
  serverTiming: string | null;
}

/**
 * JSON over kept-alive connections, up to 256 at once as the Svix harness's paced runs allow, so a slow answer
 * queues at the system and not in the client; every call has its timeout.
 */
export function jsonClient(baseUrl: string) {
  const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 60_000 });
  return {
    async call(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, extra: Record<string, string> = {}) {
      const res = await request(`${baseUrl}${path}`, {
        method,
        dispatcher,
        headers: { 'content-type': 'application/json', ...extra },
        body: body === undefined ? undefined : JSON.stringify(body),
        headersTimeout: 60_000,
        bodyTimeout: 60_000,
      });
      const text = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
      const timing = res.headers['server-timing'];
      return {
        json: (text ? JSON.parse(text) : {}) as Record<string, any>,
        serverTiming: typeof timing === 'string' ? timing : null,
      };
    },
    close: () => dispatcher.close(),
  };
}

/**
 * Tranche at `baseUrl`, as `npm start` serves it (Set A paths): each organisation's staff member gets a real access
 * token, minted by the development identity provider with an API key and exchanged at /identity/auth/exchange,
 * renewed at half its life; each message is `POST …/webhook-endpoints/{id}/test`.
 */
export function trancheTarget(baseUrl: string, sink: Sink): ClientTarget {
  const http = jsonClient(baseUrl);
  return {
    system: 'tranche',
    async org() {
      const orgId = randomUUID();
      const userId = `bench-${orgId.slice(0, 8)}`;
      let apiKey: string | undefined;
      const mint = async () => {
        const idp = (
          await http.call('POST', '/dev-idp/mint', {
            user_id: userId,
            org_id: orgId,
            roles: ['staff'],
            api_key: !apiKey,
          })
        ).json.data;
        apiKey ??= String(idp.api_key);
        const got = (
          await http.call('POST', '/identity/auth/exchange', { token: idp.id_token }, { 'x-api-key': apiKey })
        ).json.data;
        return { token: String(got.access_token), renewAt: Date.now() + (Number(got.expires_in) * 1000) / 2 };
      };
      let current = await mint();
      let renewing: Promise<void> | undefined;
      const fresh = async () => {
        if (Date.now() < current.renewAt) return;
        renewing ??= mint().then((m) => {
          current = m;
          renewing = undefined;
        });
        await renewing;
      };
      const bearer = () => ({ authorization: `Bearer ${current.token}` });
      const endpoints = '/notifications/webhook-endpoints';
      return {
        id: orgId,
        async endpoint(kind) {
          await fresh();
          const hook = randomUUID();
          const body = { url: `${sink.url}/${kind}/${hook}`, eventTypes: ['*'] };
          const data = (await http.call('POST', endpoints, body, bearer())).json.data;
          await sink.register(hook, String(data.signing_secret), orgId);
          return String(data.id);
        },
        async publish(endpointId) {
          await fresh();
          const res = await http.call('POST', `${endpoints}/${endpointId}/test`, undefined, {
            ...bearer(),
            'idempotency-key': randomUUID(),
          });
          return { eventId: String(res.json.data.event_id), serverTiming: res.serverTiming };
        },
        async disable(endpointId) {
          await fresh();
          await http.call('PATCH', `${endpoints}/${endpointId}`, { status: 'disabled' }, bearer());
        },
      };
    },
    close: () => http.close(),
  };
}
