/**
 * Payload filters (docs/decisions/0398-payload-filters.md): an endpoint may carry a filter over its events'
 * `data`, a small language of conditions on JSON paths joined by all/any:
 *   { "path": "amount.currency", "eq": "USD" }        equal to a string, number, boolean or null
 *   { "path": "status", "in": ["approved", "funded"] } equal to one of them
 *   { "path": "reason", "exists": true }               present (or, false, absent)
 *   { "all": [ ... ] }, { "any": [ ... ] }             every one, or at least one
 * It is compiled once, when the endpoint is registered or changed, to a PostgreSQL jsonpath predicate the
 * publish statement evaluates for each event and endpoint (webhooks/events/publish.ts), so matching stays one
 * statement. The API checks the shape (api/notifications/filter-schema.ts); this file owns the meaning.
 */
type Scalar = string | number | boolean | null;
export type PayloadFilter =
  | { all: PayloadFilter[] }
  | { any: PayloadFilter[] }
  | { path: string; eq: Scalar }
  | { path: string; in: Scalar[] }
  | { path: string; exists: boolean };

/** A path's segments: letters, digits and `_`, up to 8 of them, each at most 64 long. */
const FILTER_PATH = /^[A-Za-z0-9_]{1,64}(\.[A-Za-z0-9_]{1,64}){0,7}$/;
const FILTER_LIMITS = { depth: 4, conditions: 20, inValues: 50 } as const;

const literal = (v: Scalar) => JSON.stringify(v);
const pathOf = (path: string) =>
  `$${path
    .split('.')
    .map((s) => `."${s}"`)
    .join('')}`;

/** The jsonpath predicate of a filter the API has checked. */
export function compileFilter(f: PayloadFilter): string {
  if ('all' in f) return `(${f.all.map(compileFilter).join(' && ')})`;
  if ('any' in f) return `(${f.any.map(compileFilter).join(' || ')})`;
  const at = pathOf(f.path);
  if ('eq' in f) return `(${at} == ${literal(f.eq)})`;
  if ('in' in f) return `(${f.in.map((v) => `${at} == ${literal(v)}`).join(' || ')})`;
  return f.exists ? `(exists(${at}))` : `(!(exists(${at})))`;
}

/** How deep the filter nests and how many conditions it holds, for the API's bounds. */
function filterSize(f: PayloadFilter, depth = 1): { depth: number; conditions: number } {
  const parts = 'all' in f ? f.all : 'any' in f ? f.any : null;
  if (!parts) return { depth, conditions: 1 };
  return parts
    .map((p) => filterSize(p, depth + 1))
    .reduce((a, b) => ({ depth: Math.max(a.depth, b.depth), conditions: a.conditions + b.conditions }), {
      depth,
      conditions: 0,
    });
}

interface FilterRefusal {
  path: (string | number)[];
  message: string;
}

const SHAPES = 'a filter is {path, eq}, {path, in}, {path, exists}, {all: [...]} or {any: [...]}';
const isScalar = (v: unknown): v is Scalar =>
  v === null ||
  typeof v === 'boolean' ||
  (typeof v === 'string' && v.length <= 200) ||
  (typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= 1e15);
const SCALAR = 'a string of at most 200 characters, a number within ±10^15, true, false or null';

/** What is wrong with a filter as given, each where it is; none: it is a PayloadFilter within the limits. */
export function filterRefusals(value: unknown): FilterRefusal[] {
  const out: FilterRefusal[] = [];
  const walk = (v: unknown, at: (string | number)[]) => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return void out.push({ path: at, message: SHAPES });
    const keys = Object.keys(v);
    const o = v as Record<string, unknown>;
    const join = keys.length === 1 && (keys[0] === 'all' || keys[0] === 'any') ? keys[0] : null;
    if (join) {
      const parts = o[join];
      if (!Array.isArray(parts) || parts.length === 0)
        return void out.push({ path: [...at, join], message: `${join} takes a list of one filter or more` });
      return parts.forEach((p, i) => walk(p, [...at, join, i]));
    }
    const test = keys.filter((k) => k !== 'path');
    if (!keys.includes('path') || test.length !== 1 || !['eq', 'in', 'exists'].includes(test[0]!))
      return void out.push({ path: at, message: SHAPES });
    if (typeof o.path !== 'string' || !FILTER_PATH.test(o.path))
      out.push({
        path: [...at, 'path'],
        message: "a path is 1 to 8 names of letters, digits and _ joined by dots, within the event's data",
      });
    const op = test[0]!;
    if (op === 'eq' && !isScalar(o.eq)) out.push({ path: [...at, 'eq'], message: `eq takes ${SCALAR}` });
    if (op === 'exists' && typeof o.exists !== 'boolean')
      out.push({ path: [...at, 'exists'], message: 'exists takes true or false' });
    if (op === 'in') {
      const list = o.in;
      if (!Array.isArray(list) || list.length === 0 || list.length > FILTER_LIMITS.inValues)
        out.push({ path: [...at, 'in'], message: `in takes a list of 1 to ${FILTER_LIMITS.inValues} values` });
      else list.forEach((x, i) => isScalar(x) || out.push({ path: [...at, 'in', i], message: `each is ${SCALAR}` }));
    }
  };
  walk(value, []);
  if (out.length) return out;
  const { depth, conditions } = filterSize(value as PayloadFilter);
  if (depth > FILTER_LIMITS.depth)
    out.push({ path: [], message: `a filter nests at most ${FILTER_LIMITS.depth} deep (${depth} given)` });
  if (conditions > FILTER_LIMITS.conditions)
    out.push({
      path: [],
      message: `a filter holds at most ${FILTER_LIMITS.conditions} conditions (${conditions} given)`,
    });
  return out;
}
