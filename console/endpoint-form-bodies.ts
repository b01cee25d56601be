import type { Context } from 'koa';
import { field, fields } from './console-kit';
import type { Notice } from './layout';
import type { EndpointDraft } from './views/endpoint-forms-view';
import { DEFAULT_PAYLOAD_VERSION } from '../domain/payload-versions';

/*
 * The endpoint pages' forms as the JSON API's bodies, and the notice a redirect after a change lands on
 * (console/endpoint-pages.ts holds the routes that send them).
 */

/** What a redirect after a change says on the page it lands on (?done=…). */
const DONE: Record<string, string> = {
  updated: 'Endpoint saved.',
  enabled: 'Endpoint re-enabled: new events are delivered to it again.',
  disabled: 'Endpoint disabled: it gets no deliveries until you re-enable it.',
  deleted: 'Endpoint deleted.',
  authentication: 'Authentication saved: the next deliveries use it.',
  'secret-gone':
    'A new signing secret is shown once, on the page right after it is made, and not again. If you did not store it, rotate the secret again.',
};
export const doneNotice = (ctx: Context): Notice | null => {
  const done = ctx.query.done;
  return typeof done === 'string' && Object.hasOwn(DONE, done) ? { kind: 'ok', text: DONE[done]! } : null;
};

/** The form as the API's register or update body: numbers as numbers, empty limits left out (register) or null (edit). */
export function bodyOf(d: EndpointDraft, edit: boolean) {
  const num = (s: string) => (s === '' ? (edit ? null : undefined) : Number(s));
  return {
    url: d.url,
    description: d.description,
    ...(edit ? {} : { eventTypes: d.eventTypes }),
    ordering: d.ordering,
    maxInFlight: num(d.maxInFlight),
    rateLimitPerSecond: num(d.rateLimitPerSecond),
    sendTraceparent: d.sendTraceparent,
    payloadVersion: d.payloadVersion,
  };
}

/** The authentication form as the PATCH body's `authentication`: null for signature only; empty optionals left out. */
export function authenticationOf(body: unknown) {
  const type = field(body, 'type');
  const optional = (name: string) => (field(body, name) ? { [name]: field(body, name) } : {});
  if (type === 'mtls')
    return {
      type,
      clientCertificate: field(body, 'clientCertificate'),
      clientKey: field(body, 'clientKey'),
      ...optional('caCertificate'),
    };
  if (type === 'oauth2_client_credentials')
    return {
      type,
      tokenUrl: field(body, 'tokenUrl'),
      clientId: field(body, 'clientId'),
      clientSecret: field(body, 'clientSecret'),
      ...optional('scope'),
    };
  return null;
}

export const draftFrom = (body: unknown): EndpointDraft => ({
  url: field(body, 'url'),
  description: field(body, 'description'),
  eventTypes: fields(body, 'eventTypes'),
  ordering: field(body, 'ordering') || 'none',
  maxInFlight: field(body, 'maxInFlight'),
  rateLimitPerSecond: field(body, 'rateLimitPerSecond'),
  sendTraceparent: field(body, 'sendTraceparent') === 'true',
  payloadVersion: field(body, 'payloadVersion') || DEFAULT_PAYLOAD_VERSION,
});
