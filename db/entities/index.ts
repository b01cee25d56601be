import { AccreditationDocumentSchema, AccreditationSchema } from './identity-accreditation';
import { IdentityApiKeySchema } from './identity-api-key';
import { KycAttemptSchema, KycCaseSchema, KycSessionSchema } from './identity-kyc';
import { OfferingSchema } from './offering';
import { PaymentNotificationSchema } from './payment-notification';
import { PaymentReferenceSchema } from './payment-reference';
import { SandboxCollectionSchema, SandboxEventSchema, SandboxSessionSchema } from './payment-sandbox';
import { SecurityClassSchema } from './security-class';
import { SubscriptionRecordSchema } from './subscription-record';
import { TrancheSchema } from './tranche';

/** Every entity the ORM knows. Each feature adds its schemas here. */
export const entities = [
  OfferingSchema,
  SecurityClassSchema,
  TrancheSchema,
  SubscriptionRecordSchema,
  IdentityApiKeySchema,
  KycCaseSchema,
  KycAttemptSchema,
  KycSessionSchema,
  AccreditationSchema,
  AccreditationDocumentSchema,
  PaymentNotificationSchema,
  PaymentReferenceSchema,
  SandboxSessionSchema,
  SandboxCollectionSchema,
  SandboxEventSchema,
];
