import { EntitySchema } from '@mikro-orm/core';
import type { AccreditationStatus } from '../../domain/accreditation';

export interface Accreditation {
  id: string;
  orgId: string;
  userId: string;
  /** How the investor claims accreditation, e.g. income, net_worth, professional. */
  method: string;
  status: AccreditationStatus;
  createdAt: Date;
  updatedAt: Date;
}

/** Metadata of an evidence document; the file itself lives with the verification provider. */
export interface AccreditationDocument {
  id: string;
  accreditationId: string;
  fileName: string;
  contentType: string;
  sha256: string;
  createdAt: Date;
}

export const AccreditationSchema = new EntitySchema<Accreditation>({
  name: 'Accreditation',
  tableName: 'accreditations',
  properties: {
    id: { type: 'uuid', primary: true },
    orgId: { type: 'uuid' },
    userId: { type: 'string' },
    method: { type: 'string' },
    status: { type: 'string' },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
  },
});

export const AccreditationDocumentSchema = new EntitySchema<AccreditationDocument>({
  name: 'AccreditationDocument',
  tableName: 'accreditation_documents',
  properties: {
    id: { type: 'uuid', primary: true },
    accreditationId: { type: 'uuid' },
    fileName: { type: 'string' },
    contentType: { type: 'string' },
    sha256: { type: 'string', length: 64 },
    createdAt: { type: 'Date' },
  },
});
