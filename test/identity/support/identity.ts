import { createHmac, randomUUID } from 'node:crypto';
import type { BehaviourSet } from '../../../lib/behaviour-set';
import type { Actor } from '../../support/fixtures';
import { createApiKey } from '../../../identity/api-keys';
import { http, type Reply } from '../../support/http';
import type { TestService } from '../../support/service';
import { startWebhookStack } from '../../webhooks/support/stack';

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

/**
 * The identity suites' stack: the set's service taking provider notifications signed with PROVIDER_SECRET
 * (loopback receivers allowed), a receiver, and staff of a new organisation.
 */
export const startIdentityStack = (set: BehaviourSet) =>
  startWebhookStack(set, { IDENTITY_PROVIDER_WEBHOOK_SECRET: PROVIDER_SECRET });

/** The answer's data when its status is the one expected; otherwise the test fails, showing the answer. */
export const expectOk = (res: { status: number; body: any }, status = 200) => {
  if (res.status !== status) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
};

/** An accreditation document's metadata, a fresh digest each time. */
export const accreditationDocument = () => ({
  file_name: 'w2-2025.pdf',
  content_type: 'application/pdf',
  sha256: randomUUID().replace(/-/g, '').repeat(2),
});

/** The moves of a KYC or accreditation record, by the provider and by staff, on the stack `at()` returns when called. */
export function identityMoves(at: () => { svc: TestService; staff: Actor }) {
  return {
    provider: async (kind: 'kyc' | 'accreditation', id: string, action: string) =>
      expectOk(await notifyAsProvider(at().svc, { kind, id, action })),
    decide: async (kind: 'kyc' | 'accreditations', id: string, action: string) =>
      expectOk(
        await http(at().svc.baseUrl).post(`/identity/${kind}/${id}/decisions`, at().staff.token, {
          action,
          reason: 'checked by staff',
        }),
      ),
    /** The investor's row in the KYC gate. */
    gateRow: async (a: Actor) =>
      (
        await at()
          .svc.orm.em.getConnection()
          .execute('select status from kyc_verifications where org_id = ? and user_id = ?', [a.orgId, a.userId])
      )[0]?.status,
  };
}
