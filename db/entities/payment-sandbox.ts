import { EntitySchema } from '@mikro-orm/core';

/** The built-in sandbox processor's records (payments/sandbox). Amounts are integer cents. */
/** superseded: the investor opened a newer session for the same subscription. */
export type SandboxSessionStatus =
  'open' | 'complete' | 'cancelled' | 'declined' | 'superseded' | 'closed' | 'refunded' | 'disputed';

export interface SandboxSession {
  id: string;
  mode: 'setup' | 'payment';
  subscriptionId: string;
  investorId: string;
  method: string;
  /** Payment mode only: minor units of `currency` (column amount_cents); the driver hands a bigint back as a string. */
  amountMinor: string | null;
  currency: string;
  successUrl: string;
  cancelUrl: string;
  status: SandboxSessionStatus;
  paymentMethodRef: string | null;
  createdAt: Date;
  expiresAt: Date;
  completedAt: Date | null;
}

export const SandboxSessionSchema = new EntitySchema<SandboxSession>({
  name: 'SandboxSession',
  tableName: 'payment_sandbox_sessions',
  properties: {
    id: { type: 'uuid', primary: true },
    mode: { type: 'string' },
    subscriptionId: { type: 'uuid' },
    investorId: { type: 'string' },
    method: { type: 'string' },
    amountMinor: { type: 'bigint', fieldName: 'amount_cents', nullable: true },
    currency: { type: 'string' },
    successUrl: { type: 'text' },
    cancelUrl: { type: 'text' },
    status: { type: 'string' },
    paymentMethodRef: { type: 'string', nullable: true },
    createdAt: { type: 'Date' },
    expiresAt: { type: 'Date' },
    completedAt: { type: 'Date', nullable: true },
  },
});

export type SandboxCollectionStatus = 'processing' | 'in_escrow' | 'failed' | 'refunded' | 'disputed';

export interface SandboxCollection {
  id: string;
  idempotencyKey: string;
  subscriptionId: string;
  setupSessionId: string;
  /** Minor units of `currency` (column amount_cents). */
  amountMinor: string;
  currency: string;
  status: SandboxCollectionStatus;
  createdAt: Date;
  updatedAt: Date;
}

export const SandboxCollectionSchema = new EntitySchema<SandboxCollection>({
  name: 'SandboxCollection',
  tableName: 'payment_sandbox_collections',
  properties: {
    id: { type: 'uuid', primary: true },
    idempotencyKey: { type: 'string', unique: true },
    subscriptionId: { type: 'uuid' },
    setupSessionId: { type: 'uuid' },
    amountMinor: { type: 'bigint', fieldName: 'amount_cents' },
    currency: { type: 'string' },
    status: { type: 'string' },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
  },
});

/** A notification the sandbox sent (or is still sending) to the service, body exactly as signed. */
export interface SandboxEvent {
  id: string;
  type: string;
  body: string;
  createdAt: Date;
  attempts: number;
  deliveredAt: Date | null;
  lastError: string | null;
}

export const SandboxEventSchema = new EntitySchema<SandboxEvent>({
  name: 'SandboxEvent',
  tableName: 'payment_sandbox_events',
  properties: {
    id: { type: 'string', primary: true },
    type: { type: 'string' },
    body: { type: 'text' },
    createdAt: { type: 'Date' },
    attempts: { type: 'integer' },
    deliveredAt: { type: 'Date', nullable: true },
    lastError: { type: 'text', nullable: true },
  },
});
