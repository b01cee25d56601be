import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { IdentityApiKeySchema, type IdentityApiKey } from '../db/entities/identity-api-key';
import { newId } from '../lib/ids';
import { notFound, unauthenticated } from '../lib/errors';

/** spec §5.2: `service_ak_<org_id>_<random>`. The random part is 32 bytes, hex. */
const KEY_FORMAT = /^service_ak_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_([0-9a-f]{64})$/;

// The secret is 256 random bits, so a plain SHA-256 is enough: there is nothing to brute-force
// that a slow hash would protect, and lookups stay one indexed equality.
const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

export interface ApiKeyView {
  id: string;
  name: string;
  org_id: string;
  last_four: string;
  created_by: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

export const toApiKeyView = (k: IdentityApiKey): ApiKeyView => ({
  id: k.id,
  name: k.name,
  org_id: k.orgId,
  last_four: k.lastFour,
  created_by: k.createdBy,
  created_at: k.createdAt.toISOString(),
  revoked_at: k.revokedAt?.toISOString() ?? null,
  last_used_at: k.lastUsedAt?.toISOString() ?? null,
});

/**
 * Creates a key for the organisation; the plain key is returned here once and the key's record keeps
 * only its hash. The answer that shows it is kept sealed under its Idempotency-Key, if it came with
 * one, and replayed only to the same admin holding the same roles (docs/decisions/README.md, Trust, second pass).
 */
export async function createApiKey(em: EntityManager, input: { orgId: string; name: string; createdBy: string }) {
  const secret = randomBytes(32).toString('hex');
  const key = `service_ak_${input.orgId}_${secret}`;
  const record: IdentityApiKey = {
    id: newId(),
    orgId: input.orgId,
    name: input.name,
    secretHash: hashSecret(secret),
    lastFour: secret.slice(-4),
    createdBy: input.createdBy,
    createdAt: new Date(),
    revokedAt: null,
    lastUsedAt: null,
  };
  await em.insert(IdentityApiKeySchema, record);
  return { key, record };
}

export async function listApiKeys(em: EntityManager, orgId: string): Promise<IdentityApiKey[]> {
  return em.find(IdentityApiKeySchema, { orgId }, { orderBy: { createdAt: 'desc' } });
}

/** Revokes a key of the organisation; revoking twice keeps the first revocation time. */
export async function revokeApiKey(em: EntityManager, orgId: string, id: string): Promise<IdentityApiKey> {
  const key = await em.findOne(IdentityApiKeySchema, { id, orgId });
  if (!key) throw notFound('API key');
  if (!key.revokedAt) {
    key.revokedAt = new Date();
    await em.flush();
  }
  return key;
}

/** The org id a well-formed key names, before any lookup (used to count requests per key). */
export function parseApiKey(header: string | undefined): { orgId: string; secret: string } {
  if (!header) throw unauthenticated('Send the organisation API key in X-API-Key', 'API_KEY_MISSING');
  const match = KEY_FORMAT.exec(header.trim());
  if (!match) throw unauthenticated('X-API-Key must look like service_ak_<org_id>_<random>', 'API_KEY_MALFORMED');
  return { orgId: match[1]!, secret: match[2]! };
}

/** Finds the live key behind the header; each way it can fail has its own code. */
export async function authenticateApiKey(
  em: EntityManager,
  parsed: { orgId: string; secret: string },
): Promise<IdentityApiKey> {
  const key = await em.findOne(IdentityApiKeySchema, { secretHash: hashSecret(parsed.secret) });
  if (!key) throw unauthenticated('This API key is not known', 'API_KEY_UNKNOWN');
  if (key.revokedAt) throw unauthenticated('This API key has been revoked', 'API_KEY_REVOKED');
  // The org segment is not part of the hashed secret, so an edited segment is caught here.
  if (key.orgId !== parsed.orgId)
    throw unauthenticated('This API key belongs to another organisation than it names', 'API_KEY_ORG_MISMATCH');
  await em.nativeUpdate(IdentityApiKeySchema, { id: key.id }, { lastUsedAt: new Date() });
  return key;
}
