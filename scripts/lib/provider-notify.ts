import { providerSignature } from '../../identity';

/**
 * Sends one notification as the KYC/accreditation provider would: signed with the provider's
 * secret over `<timestamp>.<body>` (identity/provider-signature.ts).
 */
export async function providerNotify(
  baseUrl: string,
  secret: string,
  body: { kind: 'kyc' | 'accreditation'; id: string; action: string; reason?: string },
) {
  const raw = JSON.stringify(body);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const res = await fetch(`${baseUrl.replace(/\/$/, '')}/identity/provider/notifications`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-provider-timestamp': timestamp,
      'x-provider-signature': providerSignature(secret, timestamp, raw),
    },
    body: raw,
    signal: AbortSignal.timeout(10_000),
  });
  return {
    status: res.status,
    body: (await res.json().catch(() => ({}))) as {
      data?: Record<string, unknown>;
      error?: { code: string; message: string };
    },
  };
}
