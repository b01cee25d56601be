import { createHmac } from 'node:crypto';
import { createApiKey } from '../../../identity/api-keys';
import { http, type Reply } from '../../support/http';
import type { TestService } from '../../support/service';

export const PROVIDER_SECRET = 'test-provider-secret-0123456789abcdef';

/** An API key for the organisation, made the way the bootstrap command makes one. */
export async function apiKeyFor(svc: TestService, orgId: string): Promise<string> {
  return (await createApiKey(svc.orm.em.fork(), { orgId, name: 'test', createdBy: 'test' })).key;
}

export function exchange(svc: TestService, apiKey: string | undefined, token: unknown): Promise<Reply> {
  return http(svc.baseUrl).post(
    '/identity/auth/exchange',
    undefined,
    { token },
    apiKey === undefined ? {} : { 'x-api-key': apiKey },
  );
}

/** Sends a notification as the verification provider does: HMAC-SHA256 over `<timestamp>.<raw body>`. */
export function notifyAsProvider(
  svc: TestService,
  body: unknown,
  opts: { secret?: string; timestamp?: number } = {},
): Promise<Reply> {
  const raw = JSON.stringify(body);
  const ts = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
  const sig = createHmac('sha256', opts.secret ?? PROVIDER_SECRET)
    .update(`${ts}.${raw}`)
    .digest('hex');
  return http(svc.baseUrl).call('POST', '/identity/provider/notifications', {
    raw,
    headers: {
      'content-type': 'application/json',
      'x-provider-timestamp': ts,
      'x-provider-signature': `sha256=${sig}`,
    },
  });
}

/** The identity events stored for the organisation, oldest first. */
export async function identityEvents(
  svc: TestService,
  orgId: string,
): Promise<{ type: string; source: string; data: Record<string, unknown> }[]> {
  return svc.orm.em
    .getConnection()
    .execute(
      `select type, source, data from events where org_id = ? and source = 'service.identity' order by occurred_at, created_at`,
      [orgId],
    );
}
