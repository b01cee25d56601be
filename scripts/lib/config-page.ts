/**
 * docs/operators/configuration.md, written from the settings schema so it cannot drift: each part of
 * ConfigSchema (lib/runtime/config-schema.ts) is a file in lib/runtime/settings/, each setting a property
 * of its exported object with its doc comment. The form and default come from the zod schema itself; the
 * words from the doc comments. `npm run -s docs:config` writes the page; `npm run -s lint:docs` fails when
 * the page on disk is not what this renders, or when a setting of the schema has no entry in it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { z } from 'zod';
import { ConfigSchema } from '../../lib/runtime/config-schema';

const root = join(__dirname, '..', '..');
const SETTINGS = 'lib/runtime/settings';
export const CONFIG_PAGE = 'docs/operators/configuration.md';

/** Settings in the order of their file; a run of settings under one doc comment shares it. */
interface Setting {
  names: string[];
  doc: string;
}
interface Part {
  file: string;
  title: string;
  doc: string;
  settings: Setting[];
}

/** A JSDoc comment's words, its `*` margins gone; `@readBy who` becomes a sentence. */
function commentText(raw: string): string {
  return raw
    .replace(/^\/\*\*/, '')
    .replace(/\*\/$/, '')
    .split('\n')
    .map((l) => l.replace(/^\s*\* ?/, '').trim())
    .join(' ')
    .replace(/@readBy\s+([^.]*)/, 'Read by $1')
    .replace(/\s+/g, ' ')
    .trim();
}

function leadingDoc(source: string, node: ts.Node): string {
  const ranges = ts.getLeadingCommentRanges(source, node.getFullStart()) ?? [];
  return ranges
    .map((r) => source.slice(r.pos, r.end))
    .filter((c) => c.startsWith('/**'))
    .map(commentText)
    .join(' ');
}

/** One settings file: its exported object's properties in order, each with its doc comment. */
function readPart(file: string): Part {
  const source = readFileSync(join(root, SETTINGS, file), 'utf8');
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  for (const statement of sf.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const decl = statement.declarationList.declarations[0];
    if (!decl?.initializer || !ts.isObjectLiteralExpression(decl.initializer)) continue;
    const settings: Setting[] = [];
    for (const prop of decl.initializer.properties) {
      if (!ts.isPropertyAssignment(prop) || !ts.isIdentifier(prop.name)) continue;
      // A setting with no comment of its own after one with a comment is of that comment's run.
      const own = leadingDoc(source, prop);
      const last = settings[settings.length - 1];
      if (own === '' && last && last.doc !== '') last.names.push(prop.name.text);
      else settings.push({ names: [prop.name.text], doc: own });
    }
    const title = TITLES[file.replace(/-settings\.ts$/, '')] ?? file.replace(/-settings\.ts$/, '');
    const doc = leadingDoc(source, statement).replace(/\s*Part of ConfigSchema \([^)]*\)\.?/, '');
    return { file: `${SETTINGS}/${file}`, title, doc, settings };
  }
  throw new Error(`${SETTINGS}/${file} exports no settings object`);
}

/** Each part's heading, by its file's name. */
const TITLES: Record<string, string> = {
  api: 'The API',
  audit: 'The audit trail',
  identity: 'Identity',
  payment: 'Payments',
  retention: 'Retention',
  sealing: 'Sealing (encryption keys)',
  service: 'The service',
  telemetry: 'Telemetry',
  webhook: 'Webhooks',
};

type Schema = z.ZodType & { _zod: { def: Record<string, unknown> & { type: string } } };

/** What a value may be, read from the zod schema: the enum's values, a number's range, a string's format. */
function form(schema: Schema): string {
  const def = schema._zod.def;
  switch (def.type) {
    case 'default':
    case 'prefault':
    case 'optional':
    case 'nullable':
      return form(def.innerType as Schema);
    case 'pipe': {
      const input = def.in as Schema;
      return input._zod.def.type === 'transform' ? form(def.out as Schema) : form(input);
    }
    case 'enum':
      return Object.values(def.entries as Record<string, string>)
        .map((v) => `\`${v}\``)
        .join(' \\| ');
    case 'number': {
      const checks = ((def.checks ?? []) as { _zod: { def: { check: string; value?: unknown } } }[]).map(
        (c) => c._zod.def,
      );
      const bound = (check: string) => checks.find((c) => c.check === check)?.value as number | undefined;
      const [min, max] = [bound('greater_than'), bound('less_than')];
      const whole = checks.some((c) => c.check === 'number_format') ? 'a whole number' : 'a number';
      if (min !== undefined && max !== undefined) return `${whole}, ${min}–${max}`;
      if (min !== undefined) return `${whole}, ${min} or more`;
      return max !== undefined ? `${whole}, at most ${max}` : whole;
    }
    case 'string': {
      const format = def.format as string | undefined;
      return format && format !== 'regex' ? `a ${format.toUpperCase()}` : 'text';
    }
    default:
      return 'text';
  }
}

/** Unset, the schema gives its default, leaves it unset, or refuses it (a setting every process needs). */
function defaultOf(schema: Schema): string {
  const parsed = schema.safeParse(undefined);
  if (!parsed.success) return 'required';
  const value: unknown = parsed.data;
  if (value === undefined) return 'unset';
  if (Array.isArray(value)) return value.length === 0 ? 'none' : `\`${value.join(',')}\``;
  return `\`${String(value)}\``;
}

export function renderConfigPage(): string {
  const shape = ConfigSchema.shape as unknown as Record<string, Schema>;
  const files = readdirSync(join(root, SETTINGS))
    .filter((f) => f.endsWith('-settings.ts'))
    .sort();
  const parts = files.map(readPart);
  const lines = [
    '# Configuration',
    '',
    '<!-- Written by `npm run -s docs:config` from the settings schema (scripts/lib/config-page.ts): edit the doc',
    'comments in lib/runtime/settings/, not this page. `npm run -s lint:docs` fails when it is stale. -->',
    '',
    'Configuration is the environment, validated at start by lib/runtime/config.ts (the rules across settings, such as',
    'which secrets production requires, are there). A process is production unless `NODE_ENV` says `development` or',
    '`test`. Each part below is one file of lib/runtime/settings/. "unset" means a process starts without it unless',
    'that file or lib/runtime/config.ts says otherwise: production refuses to start without its secrets, naming each.',
    '',
  ];
  for (const part of parts) {
    lines.push(`## ${part.title}`, '', `${part.doc} (${part.file})`.trim(), '');
    lines.push('| setting | form | unset |', '|---|---|---|');
    for (const name of part.settings.flatMap((s) => s.names)) {
      const schema = shape[name];
      if (!schema) throw new Error(`${part.file}: ${name} is not in ConfigSchema`);
      lines.push(`| \`${name}\` | ${form(schema)} | ${defaultOf(schema)} |`);
    }
    lines.push('');
    for (const s of part.settings.filter((one) => one.doc !== '')) {
      lines.push(`- ${s.names.map((n) => `\`${n}\``).join(', ')}: ${s.doc}`);
    }
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/** Settings of the schema the page has no row for (each setting's row starts `| \`NAME\` |`). */
export function missingSettings(page: string): string[] {
  return Object.keys(ConfigSchema.shape).filter((name) => !page.includes(`| \`${name}\` |`));
}
