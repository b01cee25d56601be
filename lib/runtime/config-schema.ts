import { z } from 'zod';
import { apiSettings } from './settings/api-settings';
import { auditSettings } from './settings/audit-settings';
import { deploymentSettings } from './settings/deployment-settings';
import { holdSettings } from './settings/hold-settings';
import { identitySettings } from './settings/identity-settings';
import { paymentSettings } from './settings/payment-settings';
import { retentionSettings } from './settings/retention-settings';
import { sealingSettings } from './settings/sealing-settings';
import { serviceSettings } from './settings/service-settings';
import { telemetrySettings } from './settings/telemetry-settings';
import { webhookSettings } from './settings/webhook-settings';

/**
 * Every setting the service reads from its environment, in one place: each part in lib/runtime/settings/,
 * named after what it configures. Rules across settings are in lib/runtime/config.ts.
 */
export const ConfigSchema = z.object({
  ...serviceSettings,
  ...deploymentSettings,
  ...identitySettings,
  ...apiSettings,
  ...webhookSettings,
  ...sealingSettings,
  ...auditSettings,
  ...paymentSettings,
  ...telemetrySettings,
  ...retentionSettings,
  ...holdSettings,
});

export type Config = z.infer<typeof ConfigSchema>;
