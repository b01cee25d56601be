import type { JsonSchema } from './json-schema';

/** Strings a `pattern` is tried against, in turn: the shapes this API's patterns take (amounts, codes, hashes). */
const PATTERN_CANDIDATES = [
  '1000.00',
  '1000',
  'USD',
  'US',
  'example',
  'A',
  `sha256=${'0'.repeat(64)}`,
  '0'.repeat(64),
  '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
];

/** Fixed values per string format, so an example is the same on every call and in every document. */
const FORMATS: Record<string, string> = {
  uuid: '4f1c2a9e-8b3d-4e6f-9a7b-2c5d8e1f0a3b',
  'date-time': '2026-01-15T10:30:00.000Z',
  date: '2026-01-15',
  email: 'investor@example.com',
  uri: 'https://example.com/webhooks',
  url: 'https://example.com/webhooks',
};

/**
 * An example value of a JSON Schema (2020-12, as zod writes it, `$defs` resolved within `root`): every
 * property present, the first of an enum or a union that is not null, formats and patterns honoured, bounds
 * respected. Deterministic: the event catalog shows it and the test path sends it.
 */
export function exampleOf(schema: JsonSchema, root: JsonSchema = schema, depth = 0): unknown {
  if (depth > 20) return null;
  const next = (s: unknown) => exampleOf(s as JsonSchema, root, depth + 1);
  if (typeof schema.$ref === 'string') return next(resolve(root, schema.$ref));
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (union) return next(union.find((s) => s.type !== 'null') ?? union[0]);
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((s) => next(s) as object));
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(
        Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).map(([k, s]) => [k, next(s)]),
      );
    case 'array': {
      const n = Math.max(1, Number(schema.minItems ?? 1));
      return Array.from({ length: n }, () => next(schema.items ?? {}));
    }
    case 'string':
      return exampleString(schema);
    case 'integer':
    case 'number':
      return exampleNumber(schema, type === 'integer');
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return schema.properties ? next({ ...schema, type: 'object' }) : null;
  }
}

function resolve(root: JsonSchema, ref: string): JsonSchema {
  const path = ref.replace(/^#\//, '').split('/');
  let at: unknown = root;
  for (const key of path) at = (at as Record<string, unknown> | undefined)?.[key];
  return (at ?? {}) as JsonSchema;
}

function exampleString(schema: JsonSchema): string {
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  if (format) return format;
  if (typeof schema.pattern === 'string') {
    const pattern = new RegExp(schema.pattern, 'u');
    const fits = PATTERN_CANDIDATES.find((c) => pattern.test(c));
    if (fits) return fits;
  }
  const min = Number(schema.minLength ?? 0);
  const max = Number(schema.maxLength ?? Infinity);
  return 'example'.padEnd(min, 'x').slice(0, max);
}

function exampleNumber(schema: JsonSchema, integer: boolean): number {
  const low =
    typeof schema.exclusiveMinimum === 'number'
      ? schema.exclusiveMinimum + 1
      : typeof schema.minimum === 'number'
        ? schema.minimum
        : 1;
  const high = typeof schema.maximum === 'number' ? schema.maximum : Infinity;
  const value = Math.min(Math.max(low, 1), high);
  return integer ? Math.ceil(value) : value;
}
