import { conflict } from '../../lib/errors';
import type { HeadersInput, WebhookEndpointReadRow } from '../../webhooks';

/**
 * An endpoint's secret header values are for the receiver they were given for, as its authentication is
 * (docs/decisions/0377-authentication-stays-with-its-origin.md): a PATCH that moves the url to another origin
 * (scheme, host, port) does not take them along, or whoever may PATCH the url could collect the integrator's
 * gateway key at a host of their choosing without ever seeing it. Such a PATCH gives `headers` again with every
 * secret value, or without the secret ones, or null (docs/decisions/0400-custom-headers-per-endpoint.md).
 */
export function refuseSecretHeadersElsewhere(
  current: WebhookEndpointReadRow,
  patch: { url?: string; headers?: HeadersInput | null },
): void {
  if (patch.url === undefined) return;
  const secret = (current.headers ?? []).filter((h) => h.secret).map((h) => h.name);
  if (!secret.length) return;
  const from = new URL(current.url).origin;
  const to = new URL(patch.url).origin;
  if (from === to) return;
  const given = patch.headers === undefined ? undefined : Object.entries(patch.headers ?? {});
  const kept = given?.filter(([, h]) => h.secret && h.value === undefined).map(([name]) => name);
  if (given !== undefined && !kept!.length) return;
  throw conflict(
    'HEADERS_NOT_CARRIED',
    `The endpoint sends secret header${secret.length > 1 ? 's' : ''} ${(kept?.length ? kept : secret).join(', ')} to ${from}, ` +
      `whose value${secret.length > 1 ? 's do' : ' does'} not follow its url to ${to}: give headers again in the same request ` +
      'with each secret value, or without the secret headers, or headers: null',
    { field: 'headers', from_origin: from, to_origin: to },
  );
}
