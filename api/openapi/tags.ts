/** The document's tags: each operation sits under the service its path prefix names (spec §1). */
export const TAGS = [
  {
    name: 'identity',
    description: 'Token exchange, API keys, KYC and accreditation (/identity, and the development identity provider)',
  },
  { name: 'issuance', description: 'Offerings and investor subscriptions (/issuance)' },
  { name: 'notifications', description: 'Webhook endpoints, deliveries and event types (/notifications)' },
  { name: 'payments', description: 'Payment processor notifications and the built-in sandbox (/payments, /sandbox)' },
  { name: 'audit', description: "The organisation's audit trail (/audit)" },
  { name: 'service', description: 'Health, readiness and this document' },
  {
    name: 'webhooks',
    description: 'Events this deployment POSTs to registered endpoints (spec §6): envelope, data and headers',
  },
];

const BY_PREFIX: Record<string, string> = {
  identity: 'identity',
  'dev-idp': 'identity',
  issuance: 'issuance',
  notifications: 'notifications',
  payments: 'payments',
  sandbox: 'payments',
  audit: 'audit',
};

export const tagOf = (rawPath: string): string => BY_PREFIX[rawPath.split('/')[1] ?? ''] ?? 'service';
