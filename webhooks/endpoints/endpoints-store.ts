import type { Knex } from '@mikro-orm/postgresql';
import type { Orm } from '../../db/orm';
import type {
  EndpointAuthentication,
  EndpointOrdering,
  WebhookEndpointReadRow,
  WebhookEndpointRow,
} from '../../db/entities/webhook-rows';
import { newestFirst } from '../../db/keyset';
import { newId } from '../../lib/ids';
import { notFound, validationFailed } from '../../lib/errors';
import { authenticationAad } from '../secrets/authentication';
import { compileFilter, type PayloadFilter } from './payload-filter';
import type { PayloadVersion } from '../../domain/payload-versions';
import { headerColumns, MAX_CUSTOM_HEADER_BYTES, openSecretHeaders, type PreparedHeaders } from './custom-headers';
import { newSigningSecret, type SecretBox } from '../secrets/secret-box';

/**
 * Webhook endpoints of an organisation; every read and write is scoped by the caller's org. With
 * `trx`, every statement runs in that transaction (a change and its audit entry commit together).
 */
export function endpointStore(
  orm: Orm,
  secrets: SecretBox,
  opts: { overlapSeconds?: number } = {},
  trx?: Knex.Transaction,
) {
  const overlapMs = (opts.overlapSeconds ?? 86_400) * 1000;
  const knex = (): Knex | Knex.Transaction => trx ?? orm.em.getConnection().getKnex();
  const live = (orgId: string) =>
    knex()<WebhookEndpointRow>('webhook_endpoints').where({ org_id: orgId }).whereNull('deleted_at');

  /** Endpoints as read: each with its circuit breaker. */
  const reading = (orgId: string) =>
    knex()('webhook_endpoints')
      .leftJoin('webhook_endpoint_flow as f', 'f.endpoint_id', 'webhook_endpoints.id')
      .where('webhook_endpoints.org_id', orgId)
      .whereNull('webhook_endpoints.deleted_at')
      .select(
        'webhook_endpoints.*',
        knex().raw(`coalesce(f.circuit_state, 'closed') as circuit_state`),
        knex().raw('coalesce(f.consecutive_failures, 0) as consecutive_failures'),
        'f.opened_at as circuit_opened_at',
        'f.probe_at as circuit_probe_at',
      );

  async function get(orgId: string, id: string): Promise<WebhookEndpointReadRow> {
    const row: WebhookEndpointReadRow | undefined = await reading(orgId).where('webhook_endpoints.id', id).first();
    if (!row) throw notFound('Webhook endpoint');
    return row;
  }

  /** The columns of an authentication: its settings in the clear, its secret sealed to this endpoint (decision 0319). */
  const authenticationColumns = (id: string, auth: PreparedAuthentication | null) => ({
    authentication: auth && JSON.stringify(auth.settings),
    authentication_secret_ciphertext: auth && secrets.seal(authenticationAad(id), auth.secret),
  });

  /**
   * Headers as given, for this endpoint: a secret one given without its value keeps the value it
   * has now (by name, in any case), so a PATCH need not carry secrets it does not change (decision 0400).
   */
  function prepareHeaders(id: string, input: HeadersInput, current?: WebhookEndpointRow): PreparedHeaders {
    let kept: Record<string, string> | undefined;
    const keptValue = (name: string) => {
      kept ??= current ? openSecretHeaders(secrets, id, current.headers_secret_ciphertext) : {};
      const found = Object.keys(kept).find((k) => k.toLowerCase() === name.toLowerCase());
      return found === undefined ? undefined : kept[found];
    };
    const prepared: PreparedHeaders = { list: [], secrets: {} };
    let bytes = 0;
    for (const [name, h] of Object.entries(input)) {
      const value = h.value ?? (h.secret ? keptValue(name) : undefined);
      if (value === undefined)
        throw validationFailed([
          {
            in: 'body',
            path: `headers.${name}`,
            message: h.secret
              ? `header ${name} has no secret value to keep: give its value`
              : `header ${name} needs a value (only a secret header's may be left out, to keep the one it has)`,
          },
        ]);
      prepared.list.push({ name, secret: h.secret, value: h.secret ? null : value });
      if (h.secret) prepared.secrets[name] = value;
      bytes += name.length + value.length;
    }
    // Counted again with the kept values: keeping one must not carry a set past the cap.
    if (bytes > MAX_CUSTOM_HEADER_BYTES)
      throw validationFailed([
        {
          in: 'body',
          path: 'headers',
          message: `the headers' names and values come to ${bytes} bytes with the kept secret values; at most ${MAX_CUSTOM_HEADER_BYTES}`,
        },
      ]);
    return prepared;
  }

  async function update(
    orgId: string,
    id: string,
    patch: Partial<WebhookEndpointRow>,
  ): Promise<WebhookEndpointReadRow> {
    const n = await live(orgId)
      .where({ id })
      .update({ ...patch, updated_at: new Date() });
    if (!n) throw notFound('Webhook endpoint');
    return get(orgId, id);
  }

  return {
    get,

    /** The secret is returned to the caller once and stored sealed (spec §2.6, §8). */
    async create(orgId: string, input: EndpointInput) {
      const id = newId();
      const secret = newSigningSecret();
      await knex().transaction(async (trx) => {
        await trx('webhook_endpoints').insert({
          id,
          org_id: orgId,
          url: input.url,
          description: input.description,
          event_types: input.eventTypes,
          ordering: input.ordering ?? 'none',
          max_in_flight: input.maxInFlight ?? null,
          rate_limit_per_second: input.rateLimitPerSecond ?? null,
          send_traceparent: input.sendTraceparent ?? false,
          secret_ciphertext: secrets.seal(id, secret),
          ...(input.authentication && authenticationColumns(id, input.authentication)),
          ...(input.headers && headerColumns(secrets, id, prepareHeaders(id, input.headers))),
          ...(input.filter && filterColumns(input.filter)),
          ...(input.payloadVersion && { payload_version: input.payloadVersion }),
        });
        // Its rate-limit bucket and circuit breaker, which the dispatcher locks before it sends.
        await trx('webhook_endpoint_flow').insert({ endpoint_id: id });
      });
      return { row: await get(orgId, id), secret };
    },

    /** Newest first: `limit + 1` rows after `after`, each with its `cursor_at` (the API pages them). */
    async list(orgId: string, q: { limit: number; after?: { at: string; id: string } | undefined }) {
      const query = reading(orgId).limit(q.limit + 1);
      newestFirst(query, 'webhook_endpoints', q.after);
      return (await query) as (WebhookEndpointReadRow & { cursor_at: string })[];
    },

    /** `current`: the endpoint as read in this transaction, whose secret header values a PATCH may keep. */
    update: (orgId: string, id: string, patch: EndpointPatch, current?: WebhookEndpointRow) =>
      update(orgId, id, {
        ...(patch.headers !== undefined &&
          headerColumns(secrets, id, patch.headers && prepareHeaders(id, patch.headers, current))),
        ...(patch.url !== undefined && { url: patch.url }),
        ...(patch.description !== undefined && { description: patch.description }),
        ...(patch.ordering !== undefined && { ordering: patch.ordering }),
        ...(patch.maxInFlight !== undefined && { max_in_flight: patch.maxInFlight }),
        ...(patch.rateLimitPerSecond !== undefined && { rate_limit_per_second: patch.rateLimitPerSecond }),
        ...(patch.sendTraceparent !== undefined && { send_traceparent: patch.sendTraceparent }),
        ...(patch.authentication !== undefined && authenticationColumns(id, patch.authentication)),
        ...(patch.filter !== undefined && filterColumns(patch.filter)),
        ...(patch.payloadVersion !== undefined && { payload_version: patch.payloadVersion }),
      } as Partial<WebhookEndpointRow>),

    setEventTypes: (orgId: string, id: string, eventTypes: string[]) => update(orgId, id, { event_types: eventTypes }),

    /**
     * The next attempt of every pending delivery is signed with the new secret (spec §4.3); the
     * replaced one keeps signing beside it in webhook-signature for the overlap. A second rotation
     * within the overlap drops the oldest: only the secret just replaced stays valid.
     */
    async rotate(orgId: string, id: string) {
      const secret = newSigningSecret();
      // SET reads the row as it was, so the secret moved aside is the one this statement replaced.
      const row = await update(orgId, id, {
        secret_ciphertext: secrets.seal(id, secret),
        previous_secret_ciphertext: overlapMs > 0 ? knex().raw('secret_ciphertext') : null,
        previous_secret_expires_at: overlapMs > 0 ? new Date(Date.now() + overlapMs) : null,
      } as Partial<WebhookEndpointRow>);
      return { row, secret };
    },

    /** Re-enables a disabled endpoint; it starts again with a clean failure record and a closed circuit. */
    async enable(orgId: string, id: string) {
      await knex()('webhook_endpoint_flow')
        .where({ endpoint_id: id })
        .update({ circuit_state: 'closed', consecutive_failures: 0, open_count: 0, opened_at: null, probe_at: null });
      return update(orgId, id, { status: 'enabled', disabled_reason: null, disabled_at: null, failing_since: null });
    },

    /**
     * Soft delete: delivery history stays readable. Its waiting deliveries are stopped in the
     * background, a page at a time, from the work list written here in the same transaction
     * (webhooks/endpoints/deleted-endpoints.ts); meanwhile every attempt checks the endpoint and sends nothing.
     */
    async remove(orgId: string, id: string): Promise<void> {
      await knex().transaction(async (trx) => {
        const n = await trx('webhook_endpoints')
          .where({ org_id: orgId, id })
          .whereNull('deleted_at')
          .update({ deleted_at: trx.fn.now(), updated_at: trx.fn.now() });
        if (n === 0) throw notFound('Webhook endpoint');
        await trx('webhook_endpoint_cleanups').insert({ endpoint_id: id }).onConflict('endpoint_id').ignore();
      });
    },
  };
}

export type EndpointStore = ReturnType<typeof endpointStore>;

/**
 * The organisation's live endpoints, counted under its transaction lock (held until `trx` ends), so
 * two creates at once cannot both take the last place (docs/decisions/0294-endpoints-per-organisation.md).
 */
export async function lockedEndpointCount(trx: Knex.Transaction, orgId: string): Promise<number> {
  await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`webhook-endpoints:${orgId}`]);
  const [row] = await trx('webhook_endpoints').where({ org_id: orgId }).whereNull('deleted_at').count({ n: '*' });
  return Number(row?.n ?? 0);
}

/** An endpoint's authentication as stored: the settings in the clear, the secret to seal beside them. */
export interface PreparedAuthentication {
  settings: EndpointAuthentication;
  /** The client key (PKCS#8 PEM) or the client secret; sealed by the store, never shown again. */
  secret: string;
}

export interface EndpointInput {
  url: string;
  description: string;
  eventTypes: string[];
  ordering?: EndpointOrdering;
  /** Attempts in flight to it at most; unset: the deployment's default. */
  maxInFlight?: number | null;
  /** Deliveries per second at most; unset: no limit. */
  rateLimitPerSecond?: number | null;
  /** POSTs carry `traceparent`; unset: no. */
  sendTraceparent?: boolean;
  /** Transport authentication, already checked; unset: the signature alone. */
  authentication?: PreparedAuthentication;
  /** Static headers, already checked (api/notifications/schema.ts); unset: none. */
  headers?: HeadersInput;
  /** Only events whose data matches, already checked; unset: every event it subscribes to. */
  filter?: PayloadFilter;
  /** The payload version its deliveries are sent in (docs/decisions/0420-versioned-payloads.md); unset: 1. */
  payloadVersion?: PayloadVersion;
}

/** Headers as given, already checked: a secret one may leave out its value on PATCH to keep it. */
export type HeadersInput = Record<string, { value?: string | undefined; secret: boolean }>;

/** What PATCH may change; null clears a limit back to the default (none, for the rate). */
export interface EndpointPatch {
  url?: string;
  description?: string;
  ordering?: EndpointOrdering;
  maxInFlight?: number | null;
  rateLimitPerSecond?: number | null;
  sendTraceparent?: boolean;
  /** Replaces the authentication whole; null removes it. */
  authentication?: PreparedAuthentication | null;
  /** Replaces the headers whole; null or {} removes them. */
  headers?: HeadersInput | null;
  /** Replaces the filter; null removes it. */
  filter?: PayloadFilter | null;
  /** Deliveries planned from now on are sent in it; those already planned keep theirs. */
  payloadVersion?: PayloadVersion;
}

/** The filter as given, and its predicate compiled once for the publish statement (webhooks/endpoints/payload-filter.ts). */
const filterColumns = (filter: PayloadFilter | null) => ({
  filter: filter === null ? null : JSON.stringify(filter),
  filter_path: filter === null ? null : compileFilter(filter),
});
