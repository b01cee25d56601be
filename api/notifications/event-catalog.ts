import { z } from 'zod';
import type { BehaviourSet } from '../../lib/behaviour-set';
import {
  DELIVERY_EXHAUSTED,
  ENDPOINT_DISABLED,
  ENDPOINT_FAILING,
  ENDPOINT_RECOVERED,
  EVENT_SOURCES,
  EXPLICIT_ONLY_EVENT_TYPES,
  INFO_PROVIDED,
  supportedEventTypes,
  TEST_PING,
} from '../../domain/events';
import { eventDataSchemaAt } from '../openapi/event-schemas';
import type { JsonSchema } from '../openapi/json-schema';
import { exampleOf } from '../openapi/schema-example';
import {
  bodyAtVersion,
  PAYLOAD_VERSION_SUNSETS,
  PAYLOAD_VERSIONS,
  versionStatus,
  type PayloadVersion,
} from '../../domain/payload-versions';

/** Who gets a type: endpoints subscribed to it or to `*`, only endpoints naming it, or only the test path. */
export const DELIVERED_TO = ['subscribers', 'named_only', 'test_path'] as const;

/** Where each type comes from: the spec's own, or the record that added it. */
const INTRODUCED_BY: Record<string, string> = {
  [TEST_PING]: 'spec §4.3',
  [ENDPOINT_DISABLED]: 'docs/decisions/0164-endpoint-disabled-event.md',
  [INFO_PROVIDED]: 'docs/decisions/0277-answering-an-information-request.md',
  [ENDPOINT_FAILING]: 'docs/decisions/0415-operational-events.md',
  [ENDPOINT_RECOVERED]: 'docs/decisions/0415-operational-events.md',
  [DELIVERY_EXHAUSTED]: 'docs/decisions/0415-operational-events.md',
};

/** One payload version of a type (docs/decisions/0420-versioned-payloads.md). */
interface CatalogVersion {
  version: PayloadVersion;
  status: 'current' | 'supported' | 'deprecated';
  /** The day a deprecated version stops being served; null while it is not deprecated. */
  sunset_at: string | null;
  schema: JsonSchema;
  example: { data: Record<string, unknown> } & Record<string, unknown>;
}

export interface CatalogEntry {
  event_type: string;
  delivered_to: (typeof DELIVERED_TO)[number];
  introduced_by: string;
  payload_versions: string[];
  /** Version 1's, the spec's shape: what the first catalog showed. */
  schema: JsonSchema;
  example: { data: Record<string, unknown> } & Record<string, unknown>;
  versions: CatalogVersion[];
}

/** The service that publishes a type: the `source` of its envelope. */
export function sourceOf(type: string): string {
  if (type.startsWith('subscription.') || type === 'shares.issued') return EVENT_SOURCES.issuance;
  if (type.startsWith('kyc.') || type.startsWith('accreditation.')) return EVENT_SOURCES.identity;
  return EVENT_SOURCES.notifications;
}

/**
 * The event catalog of a set (docs/decisions/0397-event-catalog.md): each type it delivers with, per payload
 * version (docs/decisions/0420-versioned-payloads.md), the JSON Schema of its §6.3 envelope (self-contained:
 * its `$defs` inside) and an example that satisfies it, who gets it and since when it exists. Version 1's
 * example is generated from its schema; a later version's is version 1's rendered as a delivery renders it,
 * so the test path's example and the catalog's agree. Built once per API process (api/notifications/router.ts
 * hands it to the test path): it changes only with the code.
 */
export function eventCatalog(set: BehaviourSet): CatalogEntry[] {
  return supportedEventTypes(set).map((type) => {
    const schemaAt = (version: PayloadVersion) => {
      const envelope = z.object({
        event_id: z.uuid(),
        event_type: z.literal(type),
        source: z.literal(sourceOf(type)),
        org_id: z.uuid(),
        version: z.literal(version).describe('The payload version (spec §9; docs/decisions/0420)'),
        timestamp: z.iso.datetime({ offset: true }),
        data: eventDataSchemaAt(set, type, version),
      });
      const { $schema: _dialect, ...schema } = z.toJSONSchema(envelope, {
        io: 'output',
        target: 'draft-2020-12',
        unrepresentable: 'any',
      }) as JsonSchema;
      return schema;
    };
    const first = schemaAt('1');
    const example = exampleOf(first) as CatalogEntry['example'];
    const versions = PAYLOAD_VERSIONS.map((version) => ({
      version,
      status: versionStatus(version),
      sunset_at: PAYLOAD_VERSION_SUNSETS[version] ?? null,
      schema: version === '1' ? first : schemaAt(version),
      example: JSON.parse(bodyAtVersion(JSON.stringify(example), version)) as CatalogEntry['example'],
    }));
    return {
      event_type: type,
      delivered_to:
        type === TEST_PING ? 'test_path' : EXPLICIT_ONLY_EVENT_TYPES.includes(type) ? 'named_only' : 'subscribers',
      introduced_by: INTRODUCED_BY[type] ?? 'spec §6.2',
      payload_versions: [...PAYLOAD_VERSIONS],
      schema: first,
      example,
      versions,
    };
  });
}
