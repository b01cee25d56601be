import { EntitySchema } from '@mikro-orm/core';

/** An organisation's API key for the token exchange. Only a hash of its secret part is stored. */
export interface IdentityApiKey {
  id: string;
  orgId: string;
  name: string;
  /** SHA-256 (hex) of the random part of `service_ak_<org_id>_<random>`. */
  secretHash: string;
  /** Last four characters of the key, so people can tell keys apart in a list. */
  lastFour: string;
  createdBy: string;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

export const IdentityApiKeySchema = new EntitySchema<IdentityApiKey>({
  name: 'IdentityApiKey',
  tableName: 'identity_api_keys',
  properties: {
    id: { type: 'uuid', primary: true },
    orgId: { type: 'uuid' },
    name: { type: 'string' },
    secretHash: { type: 'string', unique: true },
    lastFour: { type: 'string', length: 4 },
    createdBy: { type: 'string' },
    createdAt: { type: 'Date' },
    revokedAt: { type: 'Date', nullable: true },
    lastUsedAt: { type: 'Date', nullable: true },
  },
});
