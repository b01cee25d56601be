import { randomUUID } from 'node:crypto';
import { NO_BIDI_CONTROLS } from '../../../lib/text';

/**
 * The hostile-string corpus and the walk of the served OpenAPI document that places it: every
 * write operation, every string it reads in its body, query and path, and the headers it reads
 * (docs/decisions/0360-well-formed-text-at-the-door.md, 0361, 0362).
 */
export type JsonSchema = Record<string, any>;
type Where = 'body' | 'query' | 'params';

export interface Operation {
  method: string;
  /** The path as the document writes it: `/issuance/subscriptions/{subscription_id}/reject`. */
  path: string;
  op: JsonSchema;
}

/** One string the operation reads: where, its dotted path as the error envelope names it, and its schema. */
export interface StringField {
  in: Where;
  path: string;
  schema: JsonSchema;
  /** The oneOf branch the field belongs to, if any: where it sits and its schema (its discriminator and required fields). */
  branch?: { at: string; schema: JsonSchema };
}

const WRITES = ['post', 'put', 'patch', 'delete'];

export function writeOperations(doc: JsonSchema): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<JsonSchema>(doc.paths))
    for (const [method, op] of Object.entries<JsonSchema>(item))
      if (WRITES.includes(method)) ops.push({ method: method.toUpperCase(), path, op });
  return ops;
}

export const bodySchema = (op: JsonSchema): JsonSchema | undefined =>
  op.requestBody?.content?.['application/json']?.schema;

/** Every string the operation reads in its body, query and path, from its document. */
export function stringFields(op: JsonSchema): StringField[] {
  const fields: StringField[] = [];
  for (const p of (op.parameters ?? []) as JsonSchema[])
    if ((p.in === 'path' || p.in === 'query') && p.schema?.type === 'string')
      fields.push({ in: p.in === 'path' ? 'params' : 'query', path: p.name, schema: p.schema });
  const body = bodySchema(op);
  if (body) walk(body, [], undefined, (path, schema, branch) => fields.push({ in: 'body', path, schema, branch }));
  return fields;
}

function walk(
  schema: JsonSchema,
  path: string[],
  branch: StringField['branch'],
  found: (path: string, schema: JsonSchema, branch: StringField['branch']) => void,
): void {
  for (const variant of (schema.oneOf ?? schema.anyOf ?? []) as JsonSchema[]) {
    const only = { ...variant, oneOf: undefined, anyOf: undefined };
    walk(only, path, { at: path.join('.'), schema: only }, found);
  }
  if (schema.type === 'string' && !('const' in schema)) found(path.join('.'), schema, branch);
  if (schema.type === 'array' && schema.items) walk(schema.items, [...path, '0'], branch, found);
  for (const [key, s] of Object.entries<JsonSchema>(schema.properties ?? {})) walk(s, [...path, key], branch, found);
}

/** Text another person reads: its schema carries the rule against bidi controls (lib/shown-text.ts). */
export const isShownText = (s: JsonSchema) => s.pattern === NO_BIDI_CONTROLS.source;
/** Text of any characters: no format, enum or pattern of its own restricts which. */
export const isFreeText = (s: JsonSchema) => !s.format && !s.enum && (!s.pattern || isShownText(s));

// ---- The corpus ----

/** Strings the database could never store: each must be refused 422, naming the field. */
export const ILL_FORMED: [string, string][] = [
  ['a lone high surrogate', 'ok \ud800'],
  ['a lone low surrogate', '\udc00 ok'],
  ['NUL', 'a\u0000b'],
  ['a surrogate pair cut in half', '😀😀'.slice(0, 3)],
  ['a pair in the wrong order', '\ude00\ud83d'],
];

/** Explicit directional formatting characters: refused in text shown to other people (decision 0362). */
export const BIDI: [string, string][] = [
  ['a right-to-left override', 'refund \u202E001 ot'],
  ['an isolate', 'a\u2067b\u2069c'],
];

/** One character more than `max`, counted in code points, ending in two 4-byte characters. */
export const overLong = (max: number) => `${'a'.repeat(max - 1)}😀😀`;

/**
 * Exactly `max` code points (more in UTF-16 units): Hebrew, the right-to-left mark, a 4-byte
 * character across the 200th code point where the audit trail cuts reasons, and a 4-byte one last.
 */
export function atLimit(max: number): string {
  const head = max >= 8 ? 'שלום\u200F ' : '';
  const parts = [head];
  let length = [...head].length;
  if (max > 201) {
    parts.push('a'.repeat(199 - length), '😀');
    length = 200;
  }
  parts.push('b'.repeat(Math.max(0, max - length - 1)), '😀');
  const text = parts.join('');
  if ([...text].length !== max) throw new Error(`atLimit(${max}) is ${[...text].length} code points`);
  return text;
}

/** A URL of exactly `max` code points whose path ends in a 4-byte character (for `format: uri` fields). */
export const urlAtLimit = (base: string, max: number) => `${base}${'u'.repeat(max - [...base].length - 1)}😀`;

/** Path and query values as they travel in a URL: percent-encoded bytes. */
export const URL_HOSTILE: [string, string, boolean][] = [
  // [what, encoded, must be refused naming the parameter]
  ['NUL', 'a%00b', true],
  ["a lone surrogate's bytes (not UTF-8: no URL can carry a lone surrogate)", '%ED%A0%80', false],
  ['a 4-byte character', 'x%F0%9F%98%80', false],
  ['a right-to-left override', '%E2%80%AEx', false],
];

/** Header values as bytes on the wire: Node's parser refuses control characters and decodes the rest as latin1. */
export const HEADER_HOSTILE: [string, Buffer, boolean][] = [
  // [what, bytes, must be refused 422 naming the header]
  ['NUL', Buffer.from('a\u0000b', 'latin1'), true],
  ['a control character', Buffer.from('a\u0001b', 'latin1'), true],
  ["a lone surrogate's bytes", Buffer.from([0x6b, 0xed, 0xa0, 0x80]), false],
  ['a 4-byte character', Buffer.from('k😀', 'utf8'), false],
  ['a right-to-left override', Buffer.from('k\u202E', 'utf8'), false],
  ['a 300-character value', Buffer.from('k'.repeat(300), 'latin1'), false],
];

// ---- Bodies ----

/** Values the world gives a property where its schema alone cannot say (a real id, a currency). */
export type Named = (key: string, schema: JsonSchema) => unknown;

/** A value for `schema` that passes its checks where the schema alone says how; `named` gives the rest by property name. */
export function skeleton(schema: JsonSchema, named: Named, key = ''): unknown {
  const given = key ? named(key, schema) : undefined;
  if (given !== undefined) return given;
  if ('const' in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  const variant = (schema.oneOf ?? schema.anyOf)?.[0];
  if (variant) return skeleton(variant, named, key);
  switch (schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const k of (schema.required ?? []) as string[]) out[k] = skeleton(schema.properties?.[k] ?? {}, named, k);
      return out;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => skeleton(schema.items ?? {}, named));
    case 'boolean':
      return false;
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case 'string':
      if (schema.format === 'uuid') return randomUUID();
      if (schema.format === 'date-time') return new Date().toISOString();
      if (schema.format === 'uri') return 'http://127.0.0.1:9/hook';
      if (schema.format === 'ipv4') return '203.0.113.7';
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    default:
      return 'x';
  }
}

/**
 * `body` with `value` at the field's dotted path (a number names an array's element); a field of a
 * oneOf branch gets that branch around it (its discriminator and required fields, by `skeleton`).
 */
export function withValue(body: unknown, field: StringField, value: unknown, named: Named): Record<string, unknown> {
  const out = structuredClone((body ?? {}) as Record<string, unknown>);
  if (field.branch) {
    const at = field.branch.at ? field.branch.at.split('.') : [];
    const present = at.reduce<any>((o, k) => o?.[k], out);
    const consts = Object.entries<JsonSchema>(field.branch.schema.properties ?? {}).filter(([, s]) => 'const' in s);
    if (!present || consts.some(([k, s]) => present[k] !== s.const)) {
      const filled = skeleton(field.branch.schema, named) as Record<string, unknown>;
      if (at.length) setAt(out, at, filled);
      else Object.assign(out, filled);
    }
  }
  setAt(out, field.path.split('.'), value);
  return out;
}

function setAt(target: Record<string, any>, path: string[], value: unknown): void {
  let at: Record<string, any> = target;
  path.forEach((key, i) => {
    if (i === path.length - 1) at[key] = value;
    else at = at[key] ??= /^\d+$/.test(path[i + 1]!) ? [] : {};
  });
}
