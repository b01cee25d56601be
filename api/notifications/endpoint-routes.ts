import type Router from '@koa/router';
import type { Knex } from '@mikro-orm/postgresql';
import type { Middleware } from 'koa';
import type { ApiDeps } from '../deps';
import { answerHoldsSecret } from '../middleware/idempotency';
import { validate } from '../middleware/validate';
import type { SecretBox } from '../../webhooks';
import { auditedEndpointChange, endpointSnapshot } from './endpoint-audit';
import { checkEventTypes } from './event-type-policy';
import { AppError, badRequest, conflict } from '../../lib/errors';
import {
  disableEndpoint,
  endpointStore,
  lockedEndpointCount,
  successRates,
  type WebhookEndpointReadRow,
} from '../../webhooks';
import { recoveryRoutes } from './recovery-routes';
import { eventTypeRoutes } from './event-type-routes';
import { testPingRoute } from './test-ping-route';
import type { CatalogEntry } from './event-catalog';
import { assertDeliverableUrl, policyFromConfig } from '../../lib/runtime/ssrf-guard';
import { createHostResolver, resolverOptionsFromConfig } from '../../lib/runtime/dns-resolver';
import { checkWebhookUrl } from './url-policy';
import { prepareAuthentication } from './authentication-policy';
import { refuseSecretHeadersElsewhere } from './headers-origin';
import { endpointView } from './views';
import {
  EndpointParams,
  ListEndpointsQuery,
  RegisterEndpointBody,
  UpdateEndpointBody,
  type AuthenticationInput,
} from './schema';
import { EndpointList, EndpointView, EndpointWithSecret } from './answer-schema';
import { ok } from '../respond';
import { byCreation, page, positionAfter } from '../cursor';

/**
 * spec §4.3 endpoint operations; status codes and bodies as in docs/decisions/0071-webhook-status-codes.md. Its
 * event types, its test ping and its bulk recoveries have files of their own.
 */
export function endpointRoutes(
  router: Router,
  base: string,
  staff: Middleware,
  deps: ApiDeps & { secrets: SecretBox; catalog: readonly CatalogEntry[] },
): void {
  const store = endpointStore(deps.orm, deps.secrets, { overlapSeconds: deps.config.WEBHOOK_SECRET_OVERLAP_SECONDS });
  const limits = { defaultMaxInFlight: deps.config.WEBHOOK_DEFAULT_MAX_IN_FLIGHT };
  const withRate = async (row: WebhookEndpointReadRow) =>
    endpointView(row, limits, (await successRates(deps.orm, [row.id])).get(row.id));
  const set = deps.config.BEHAVIOUR_SET;
  const ssrf = policyFromConfig(deps.config);
  const resolver = createHostResolver(resolverOptionsFromConfig(deps.config));
  // Scheme rules first, then where the host really points (checked again at every connect). Called
  // before any transaction opens: a slow nameserver must not hold a database connection.
  const url = async (raw: string) => {
    const checked = checkWebhookUrl(raw, deps.config.WEBHOOK_ALLOW_INSECURE_LOOPBACK);
    // A name that does not resolve yet (or not in time) is accepted: the integrator may register
    // before their DNS is live, and every attempt's connect-time lookup guards it (decision 0274).
    await assertDeliverableUrl(checked, ssrf, resolver).catch((err: unknown) => {
      if (!(err instanceof AppError && err.code === 'WEBHOOK_URL_UNRESOLVABLE')) throw err;
    });
    return checked;
  };
  const authOpts = { allowInsecureLoopback: deps.config.WEBHOOK_ALLOW_INSECURE_LOOPBACK, ssrf, resolver };
  const authentication = (input: AuthenticationInput) => prepareAuthentication(input, authOpts);
  const one = `${base}/:id`;

  router.post(
    base,
    staff,
    validate(
      {
        body: RegisterEndpointBody,
        response: EndpointWithSecret,
        status: 201,
        summary: 'Register a webhook endpoint (returns its signing secret once)',
      },
      async (ctx, { body }) => {
        const spec = { action: 'webhook_endpoint.create', subject: { type: 'webhook_endpoint', id: 'new' } };
        const checkedUrl = await url(body.url);
        const auth = body.authentication && (await authentication(body.authentication));
        const { row, secret } = await auditedEndpointChange(deps, ctx, spec, async (tx, trx, seen) => {
          await refuseOverEndpointLimit(trx, ctx.state.principal.orgId, deps.config.WEBHOOK_MAX_ENDPOINTS_PER_ORG);
          const input = {
            url: checkedUrl,
            description: body.description,
            eventTypes: checkEventTypes(set, body.eventTypes),
            ordering: body.ordering,
            maxInFlight: body.maxInFlight,
            rateLimitPerSecond: body.rateLimitPerSecond,
            sendTraceparent: body.sendTraceparent,
            authentication: auth,
            headers: body.headers,
            filter: body.filter,
            payloadVersion: body.payloadVersion,
          };
          const made = await tx.create(ctx.state.principal.orgId, input);
          refuseMtlsOverHttp(made.row);
          seen.subject = { type: 'webhook_endpoint', id: made.row.id };
          seen.after = endpointSnapshot(made.row);
          return made;
        });
        answerHoldsSecret(ctx);
        ok(ctx, { ...endpointView(row, limits), signing_secret: secret }, 201);
      },
    ),
  );

  router.get(
    base,
    staff,
    validate(
      { query: ListEndpointsQuery, response: EndpointList, summary: "List the organisation's webhook endpoints" },
      async (ctx, { query }) => {
        const rows = await store.list(ctx.state.principal.orgId, {
          limit: query.limit,
          after: positionAfter(query.cursor),
        });
        const { items, next_cursor } = page(rows, query.limit, byCreation);
        const rates = await successRates(
          deps.orm,
          items.map((r) => r.id),
        );
        ok(ctx, { items: items.map((r) => endpointView(r, limits, rates.get(r.id))), next_cursor });
      },
    ),
  );

  router.get(
    one,
    staff,
    validate(
      { params: EndpointParams, response: EndpointView, summary: 'Get a webhook endpoint' },
      async (ctx, { params }) => {
        ok(ctx, await withRate(await store.get(ctx.state.principal.orgId, params.id)));
      },
    ),
  );

  router.patch(
    one,
    staff,
    validate(
      {
        params: EndpointParams,
        body: UpdateEndpointBody,
        response: EndpointView,
        summary:
          "Change a webhook endpoint's url, description, status (re-enable), ordering, delivery limits, authentication, headers, filter or payload version",
      },
      async (ctx, { params, body }) => {
        const orgId = ctx.state.principal.orgId;
        const subject = { type: 'webhook_endpoint', id: params.id };
        // The URL is checked first, outside the transaction: where it points (a DNS lookup) is no
        // reason to hold the endpoint's row, and a URL into our network is refused whatever the id.
        const { authentication: given, ...rest } = body;
        const patch = {
          ...rest,
          ...(body.url !== undefined && { url: await url(body.url) }),
          ...(given !== undefined && { authentication: given && (await authentication(given)) }),
        };
        const row = await auditedEndpointChange(
          deps,
          ctx,
          { action: 'webhook_endpoint.update', subject },
          async (tx, trx, seen) => {
            const current = await tx.get(orgId, params.id);
            seen.before = endpointSnapshot(current);
            refuseAuthenticationElsewhere(current, patch);
            refuseSecretHeadersElsewhere(current, patch);
            let changed = await tx.update(orgId, params.id, patch, current);
            refuseMtlsOverHttp(changed);
            // Re-enabling clears the failure record; disabling by hand tells the other endpoints.
            if (body.status === 'enabled' && changed.status === 'disabled') {
              changed = await tx.enable(orgId, params.id);
              seen.action = 'webhook_endpoint.enable';
            }
            if (body.status === 'disabled' && changed.status === 'enabled') {
              await disableEndpoint(trx, set, changed.id, 'manual');
              changed = await tx.get(orgId, params.id);
              seen.action = 'webhook_endpoint.disable';
            }
            seen.after = endpointSnapshot(changed);
            return changed;
          },
        );
        ok(ctx, await withRate(row));
      },
    ),
  );

  router.delete(
    one,
    staff,
    validate(
      { params: EndpointParams, status: 204, summary: 'Delete a webhook endpoint (its pending deliveries stop)' },
      async (ctx, { params }) => {
        const orgId = ctx.state.principal.orgId;
        const spec = { action: 'webhook_endpoint.delete', subject: { type: 'webhook_endpoint', id: params.id } };
        // Its waiting deliveries are stopped by the workers, a page at a time (webhooks/endpoints/deleted-endpoints.ts).
        await auditedEndpointChange(deps, ctx, spec, async (tx, _trx, seen) => {
          seen.before = endpointSnapshot(await tx.get(orgId, params.id));
          await tx.remove(orgId, params.id);
        });
        ctx.status = 204;
      },
    ),
  );

  router.post(
    `${one}/rotate-secret`,
    staff,
    validate(
      {
        params: EndpointParams,
        response: EndpointWithSecret,
        summary: 'Rotate the signing secret (the new one is returned once)',
      },
      async (ctx, { params }) => {
        const spec = {
          action: 'webhook_endpoint.rotate_secret',
          subject: { type: 'webhook_endpoint', id: params.id },
        };
        const { row, secret } = await auditedEndpointChange(deps, ctx, spec, (tx) =>
          tx.rotate(ctx.state.principal.orgId, params.id),
        );
        answerHoldsSecret(ctx);
        ok(ctx, { ...(await withRate(row)), signing_secret: secret });
      },
    ),
  );

  eventTypeRoutes(router, one, staff, { ...deps, store });
  testPingRoute(router, one, staff, deps);
  recoveryRoutes(router, one, staff, { ...deps, store });
}

/**
 * An endpoint's authentication is for the receiver it was given for: a new URL at another origin (scheme, host,
 * port) does not take it along, or whoever may PATCH the URL could collect bearer tokens minted from the
 * integrator's client secret, or our client certificate, at a host of their choosing without ever seeing the
 * secret. Such a PATCH gives `authentication` again, or null (docs/decisions/0377-authentication-stays-with-its-origin.md).
 */
function refuseAuthenticationElsewhere(
  current: WebhookEndpointReadRow,
  patch: { url?: string; authentication?: unknown },
): void {
  if (patch.url === undefined || patch.authentication !== undefined || current.authentication === null) return;
  const from = new URL(current.url).origin;
  const to = new URL(patch.url).origin;
  if (from === to) return;
  throw conflict(
    'AUTHENTICATION_NOT_CARRIED',
    `The endpoint authenticates to ${from} with ${current.authentication.type}, which does not follow its url to ${to}: ` +
      'give authentication again in the same request, or authentication: null to send with the signature alone',
    { field: 'authentication', from_origin: from, to_origin: to },
  );
}

/** A client certificate is presented in a TLS handshake: an mTLS endpoint's URL must be https (rolls the change back). */
function refuseMtlsOverHttp(row: WebhookEndpointReadRow): void {
  if (row.authentication?.type === 'mtls' && !row.url.startsWith('https:'))
    throw badRequest('INVALID_AUTHENTICATION', 'Invalid authentication: mutual TLS needs an https url');
}

/**
 * An organisation has at most `limit` endpoints (docs/decisions/0294-endpoints-per-organisation.md). Counted
 * under a per-organisation transaction lock, so two creates at once cannot both take the last place.
 */
async function refuseOverEndpointLimit(trx: Knex.Transaction, orgId: string, limit: number): Promise<void> {
  if ((await lockedEndpointCount(trx, orgId)) >= limit)
    throw conflict(
      'ENDPOINT_LIMIT_REACHED',
      `An organisation may have at most ${limit} webhook endpoints; delete one before registering another`,
      { limit },
    );
}
