/**
 * Expand then contract (docs/decisions/0389-migrations-expand-then-contract.md): while a release rolls out,
 * the previous release's services run against its migrated schema. A migration may add; it may not take
 * away or tighten what the previous release reads or writes, unless the previous release no longer does.
 * These rules read a migration's SQL and name each statement that takes away or tightens.
 */

/** One statement a migration may not make while the previous release runs, and the name it touches. */
export interface Finding {
  /** What the statement does, in words. */
  kind: 'drops' | 'renames' | 'retypes' | 'requires' | 'tightens';
  /** The table, column, view, function or type it touches (for a drop or rename: the name the previous release would read). */
  name: string;
  statement: string;
}

const ID = String.raw`"?([a-z_][a-z0-9_$]*)"?`;
const QUALIFIED = String.raw`(?:"?[a-z_][a-z0-9_$]*"?\.)?${ID}`;

/**
 * The findings of one statement (lower-cased, whitespace collapsed). Adding columns, tables and indexes,
 * dropping an index or a NOT NULL, and any statement in a table made by the same migration are additive.
 * @internal exported for its tests
 */
export function findingsOf(statement: string, madeHere: Set<string> = new Set()): Finding[] {
  const sql = statement.toLowerCase().replace(/\s+/g, ' ').trim();
  const out: Finding[] = [];
  const add = (kind: Finding['kind'], name: string) => out.push({ kind, name, statement: statement.trim() });
  const unique = new RegExp(
    String.raw`^create unique index (?:concurrently )?(?:if not exists )?(?:${ID} )?on (?:only )?${QUALIFIED}`,
  ).exec(sql);
  if (unique && !madeHere.has(unique[2]!)) add('tightens', `${unique[2]}: ${sql}`);
  for (const m of sql.matchAll(
    new RegExp(
      String.raw`\bdrop (?:table|view|materialized view|function|type|sequence) (?:if exists )?${QUALIFIED}`,
      'g',
    ),
  ))
    add('drops', m[1]!);
  const table = new RegExp(String.raw`^alter table (?:only )?(?:if exists )?${QUALIFIED} (.*)$`).exec(sql);
  if (!table) return out;
  const [, name, actions] = table as unknown as [string, string, string];
  if (madeHere.has(name)) return out;
  const rename = new RegExp(String.raw`^rename to ${ID}`).exec(actions);
  if (rename) add('renames', name);
  // An ALTER TABLE's actions are comma-separated; a comma inside parentheses (a type's or a default's) is not one.
  for (const action of splitActions(actions)) {
    let m: RegExpExecArray | null;
    if ((m = new RegExp(String.raw`^drop (?:column )?(?:if exists )?${ID}`).exec(action)) && m[1] !== 'constraint')
      add('drops', m[1]!);
    else if ((m = new RegExp(String.raw`^rename (?:column )?${ID} to`).exec(action))) add('renames', m[1]!);
    else if ((m = new RegExp(String.raw`^alter (?:column )?${ID} (?:set data )?type\b`).exec(action)))
      add('retypes', m[1]!);
    else if ((m = new RegExp(String.raw`^alter (?:column )?${ID} set not null`).exec(action))) add('requires', m[1]!);
    else if ((m = new RegExp(String.raw`^add (?:column )?(?:if not exists )?${ID} (.*)$`).exec(action))) {
      const [, column, rest] = m as unknown as [string, string, string];
      if (column === 'constraint' || /^(?:primary key|unique|check|foreign key|exclude)\b/.test(`${column} ${rest}`))
        add('tightens', `${name}: ${action}`);
      else if (/\bnot null\b/.test(rest) && !/\b(?:default|generated)\b/.test(rest)) add('requires', column);
    }
  }
  return out;
}

function splitActions(actions: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < actions.length; i++) {
    const c = actions[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(actions.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(actions.slice(start).trim());
  return parts.filter(Boolean);
}

/**
 * Every finding of a migration's statements, less those its source accepts with a `contract: <name>` comment
 * (the release that stopped reading the name came before: docs/decisions/0389). A drop or rename also
 * needs `previousReads(name)` false: the previous release's code does not name it.
 */
export function migrationFindings(
  statements: string[],
  source: string,
  previousReads: (name: string) => boolean,
): { finding: Finding; why: string }[] {
  const contracts = new Set([...source.matchAll(/contract:\s*([a-z_][a-z0-9_]*)/gi)].map((m) => m[1]!.toLowerCase()));
  const madeHere = new Set(
    statements.flatMap((s) =>
      [...s.toLowerCase().matchAll(new RegExp(String.raw`create table (?:if not exists )?${QUALIFIED}`, 'g'))].map(
        (m) => m[1]!,
      ),
    ),
  );
  const out: { finding: Finding; why: string }[] = [];
  for (const finding of statements.flatMap((s) => findingsOf(s, madeHere))) {
    const bare = finding.name.split(':')[0]!;
    if (!contracts.has(bare)) {
      out.push({
        finding,
        why: `the previous release still runs against this schema during the roll; no "contract: ${bare}" says it may`,
      });
    } else if ((finding.kind === 'drops' || finding.kind === 'renames') && previousReads(bare)) {
      out.push({
        finding,
        why: `the previous release's code still names ${bare}: drop it a release after the code stops reading it`,
      });
    }
  }
  return out;
}
