import type { Knex } from '@mikro-orm/postgresql';
import {
  endpointStore,
  headersShown,
  type EndpointStore,
  type SecretBox,
  type WebhookEndpointReadRow,
} from '../../webhooks';
import { recordingRefusals, recordSucceeded, type AuditSpec } from '../audit/audit-recorder';
import type { ApiDeps } from '../deps';
import type { Ctx } from '../middleware/validate';

/** What an endpoint's audit entry shows of it before and after a change: never its secret. */
export const endpointSnapshot = (row: WebhookEndpointReadRow) => ({
  url: row.url,
  status: row.status,
  event_types: row.event_types,
  // Its type only: never the key or secret, and a certificate's text is no news to an audit reader.
  authentication: row.authentication?.type ?? null,
  // Names and plain values; a secret one's value as null, never the value (decision 0400).
  headers: headersShown(row.headers),
  filter: row.filter ?? null,
  payload_version: row.payload_version,
});

/**
 * Runs a change to webhook endpoints and writes its audit entry in one transaction; `work` gets a
 * store bound to it and fills in the spec (subject, before, after) as it learns them. A refusal is
 * recorded as refused (api/audit/audit-recorder.ts).
 */
export function auditedEndpointChange<T>(
  deps: ApiDeps & { secrets: SecretBox },
  ctx: Ctx,
  spec: AuditSpec,
  work: (store: EndpointStore, trx: Knex.Transaction, spec: AuditSpec) => Promise<T>,
): Promise<T> {
  const opts = { overlapSeconds: deps.config.WEBHOOK_SECRET_OVERLAP_SECONDS };
  return recordingRefusals(deps.orm, ctx, spec, () =>
    deps.orm.em
      .getConnection()
      .getKnex()
      .transaction(async (trx) => {
        const result = await work(endpointStore(deps.orm, deps.secrets, opts, trx), trx, spec);
        await recordSucceeded(trx, ctx, spec);
        return result;
      }),
  );
}
