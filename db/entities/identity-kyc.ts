import { EntitySchema } from '@mikro-orm/core';
import type { KycAttemptStatus, KycCaseStatus, KycSessionStatus } from '../../domain/kyc';

export interface KycCase {
  id: string;
  orgId: string;
  userId: string;
  status: KycCaseStatus;
  currentAttemptId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface KycAttempt {
  id: string;
  caseId: string;
  status: KycAttemptStatus;
  createdAt: Date;
  updatedAt: Date;
}

export interface KycSession {
  id: string;
  orgId: string;
  userId: string;
  status: KycSessionStatus;
  createdAt: Date;
  updatedAt: Date;
}

const timestamps = { createdAt: { type: 'Date' }, updatedAt: { type: 'Date' } } as const;

export const KycCaseSchema = new EntitySchema<KycCase>({
  name: 'KycCase',
  tableName: 'kyc_cases',
  properties: {
    id: { type: 'uuid', primary: true },
    orgId: { type: 'uuid' },
    userId: { type: 'string' },
    status: { type: 'string' },
    currentAttemptId: { type: 'uuid', nullable: true },
    ...timestamps,
  },
});

export const KycAttemptSchema = new EntitySchema<KycAttempt>({
  name: 'KycAttempt',
  tableName: 'kyc_attempts',
  properties: {
    id: { type: 'uuid', primary: true },
    caseId: { type: 'uuid' },
    status: { type: 'string' },
    ...timestamps,
  },
});

export const KycSessionSchema = new EntitySchema<KycSession>({
  name: 'KycSession',
  tableName: 'kyc_sessions',
  properties: {
    id: { type: 'uuid', primary: true },
    orgId: { type: 'uuid' },
    userId: { type: 'string' },
    status: { type: 'string' },
    ...timestamps,
  },
});
