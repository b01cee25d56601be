/**
 * Payload versions (docs/decisions/0420-versioned-payloads.md), pure so the engine, the API and the console
 * share them: the shape of every event type's envelope and
 * data at each version. Version 1 is the spec's (§6.3, §9) and the body stored once per event is version 1;
 * a later version is a pure function of that stored body, so every attempt of a delivery, whatever
 * process makes it, sends the same bytes for the version the delivery was planned in.
 */
export const PAYLOAD_VERSIONS = ['1', '2'] as const;
export type PayloadVersion = (typeof PAYLOAD_VERSIONS)[number];

/** What an endpoint gets unless it pins another: the spec's shape (the record says why not the newest). */
export const DEFAULT_PAYLOAD_VERSION: PayloadVersion = '1';

/** The newest version: what the catalog marks current. */
const CURRENT_PAYLOAD_VERSION: PayloadVersion = '2';

/**
 * Versions announced as deprecated, with the day (UTC) they stop being served: at least 12 months after
 * the announcement (the record's policy). None yet.
 */
export const PAYLOAD_VERSION_SUNSETS: Partial<Record<PayloadVersion, string>> = {};

export const isPayloadVersion = (v: unknown): v is PayloadVersion =>
  typeof v === 'string' && (PAYLOAD_VERSIONS as readonly string[]).includes(v);

/** current, supported or deprecated: how the catalog and the endpoint's view describe a version. */
export function versionStatus(v: PayloadVersion): 'current' | 'supported' | 'deprecated' {
  if (PAYLOAD_VERSION_SUNSETS[v]) return 'deprecated';
  return v === CURRENT_PAYLOAD_VERSION ? 'current' : 'supported';
}

/**
 * Version 2's one change: the subscription's money fields are objects `{ amount, currency }` instead of
 * decimal strings beside a separate `currency` (which stays, the subscription's own currency). Version 1 cannot
 * make it without breaking every receiver that reads `total_amount` as a string.
 */
const MONEY_FIELDS = ['price_per_unit', 'total_amount', 'amount_received', 'amount_refunded'] as const;

/** An event's data in version 2, from its data in version 1; key order kept, so the output is stable. */
function dataAtVersion2(data: Record<string, unknown>): Record<string, unknown> {
  const currency = data.currency;
  if (typeof currency !== 'string') return data;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data))
    out[k] = (MONEY_FIELDS as readonly string[]).includes(k) && typeof v === 'string' ? { amount: v, currency } : v;
  return out;
}

/**
 * The body a delivery sends in `version`, from the stored version-1 body: byte for byte for version 1,
 * otherwise re-rendered with the envelope's `version` naming it. Deterministic: parse, the version's change,
 * serialise in the same key order.
 */
export function bodyAtVersion(stored: string, version: string): string {
  if (version === '1') return stored;
  if (version !== '2') throw new Error(`payload version ${version} is not served`);
  const envelope = JSON.parse(stored) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(envelope)) {
    if (k === 'version') out[k] = version;
    else if (k === 'data' && v && typeof v === 'object' && !Array.isArray(v))
      out[k] = dataAtVersion2(v as Record<string, unknown>);
    else out[k] = v;
  }
  return JSON.stringify(out);
}
