/**
 * Pointers that lead somewhere (`npm run -s lint:pointers`, part of `npm test`). Fails, naming file
 * and line, when
 *   - a code comment (a `#` comment of a script, YAML or any file under deploy/ or .ci/), a doc under docs/ or
 *     the README names a repository path that does not exist:
 *     a word that starts with one of the repository's top-level folders (read from the tree, not
 *     listed here), a `./` or `../` path (from the file's folder), a Markdown link's target, or a
 *     bare decision record's file name (`NNNN-title.md`); a section named after a Markdown file's path
 *     (`docs/decisions/README.md, Operating for years`) must be one of its headings;
 *   - a code comment or the README leans on "issue N": the reader has no issue tracker, so a comment
 *     cites the decision record or the spec section instead. Records and docs may keep history.
 * Not pointers: URLs, globs and templates (`*`, `{}`, `<>`, `$`), package names, and what the tree
 * writes for itself (the folders .prettierignore lists as written by tools, ignored files). There is
 * no marker to let a dead path through: a record that tells of a removed file says what the file
 * was without a path that looks alive, and an example path is written as a placeholder (`<name>`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..');

const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const HASH_COMMENTED = /(\.sh|\.ya?ml|Dockerfile|\.dockerignore|\.gitignore|\.prettierignore)$/;
/** Folders whose every file is read by its `#` comments, whatever its name: the deployment's configs (a Caddyfile), CI. */
const HASH_FOLDERS = ['deploy/', '.ci/'];
const MODULE_SUFFIXES = ['', '.ts', '.js', '.mjs', '.cjs', '.json', '/index.ts', '/index.js'];

interface Text {
  line: number;
  text: string;
  /** A string literal (a test's title, an OpenAPI description): read for "issue N" only. */
  literal?: boolean;
}
interface Finding {
  file: string;
  line: number;
  message: string;
}

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: root,
    encoding: 'utf8',
  });
  return out.split('\0').filter((f) => f !== '' && existsSync(join(root, f)));
}

/** Folders the tree writes for itself: .prettierignore's folder lines (bench/results/, …). */
function writtenByTools(): string[] {
  const file = join(root, '.prettierignore');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.endsWith('/') && !l.startsWith('#'));
}

/** Every comment and string literal of a TypeScript/JavaScript file, each line with its line number. */
function codeComments(source: string, fileName: string): Text[] {
  const sourceFile = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false);
  const ranges = new Map<number, ts.CommentRange>();
  const collect = (found: ts.CommentRange[] | undefined) => found?.forEach((r) => ranges.set(r.pos, r));
  const texts: Text[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      const line = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1;
      texts.push({ line, text: node.text, literal: true });
    }
    collect(ts.getLeadingCommentRanges(source, node.getFullStart()));
    collect(ts.getTrailingCommentRanges(source, node.getEnd()));
    node.getChildren(sourceFile).forEach(visit);
  };
  visit(sourceFile);
  for (const r of ranges.values()) {
    const start = sourceFile.getLineAndCharacterOfPosition(r.pos).line + 1;
    source
      .slice(r.pos, r.end)
      .split('\n')
      .forEach((text, i) => texts.push({ line: start + i, text }));
  }
  return texts;
}

/** `#` comments of shell scripts, YAML and the like (a `#` at a line's start or after a space). */
function hashComments(source: string): Text[] {
  const texts: Text[] = [];
  source.split('\n').forEach((text, i) => {
    const m = /(^|\s)#(?![!{])(.*)$/.exec(text);
    if (m) texts.push({ line: i + 1, text: m[2] ?? '' });
  });
  return texts;
}

function allLines(source: string): Text[] {
  return source.split('\n').map((text, i) => ({ line: i + 1, text }));
}

const URL = /\b[a-z][a-z0-9+.-]*:\/\/[^\s)>\]'"`]+/gi;
const CANDIDATE = /(?<![\w@.:/$~-])(?:\.{1,2}\/)*[\w.@-]+(?:\/[\w.@*{}<>$[\]-]*)+/g;
const RECORD_NAME = /(?<![\w/.-])\d{4}-[\w-]+\.md\b/g;
const MD_LINK = /\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
const ISSUE = /\bissues?\s+#?\d+/i;
/** `(docs/decisions/README.md, Operating for years)`: a section of a Markdown file, by its heading. */
const SECTION = /(?<![\w@.:/$~-])((?:\.{1,2}\/)*[\w.@-]+(?:\/[\w.@-]+)*\.md), ([A-Z][^);:`]*)\)/g;

function headings(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => /^#{1,6} /.test(l))
    .map((l) => l.replace(/^#+ /, '').toLowerCase());
}

/**
 * A path resolves as a file or folder, as a module without its extension, or as the start of a
 * file's name in its folder (`docs/decisions/0266` for a record, `0246-0256` for a range of them).
 */
function resolves(path: string): boolean {
  if (MODULE_SUFFIXES.some((suffix) => existsSync(path + suffix))) return true;
  const folder = dirname(path);
  const first = /^(\d{4})(-\d{4})?$/.exec(path.slice(folder.length + 1))?.[1];
  return first !== undefined && existsSync(folder) && readdirSync(folder).some((f) => f.startsWith(`${first}-`));
}

function main(): void {
  const files = trackedFiles();
  const skipped = writtenByTools();
  const topLevel = new Set(files.filter((f) => f.includes('/')).map((f) => f.split('/')[0]));
  const recordsDir = files.find((f) => /(^|\/)decisions\/\d{4}-[\w-]+\.md$/.test(f));
  const recordsFolder = recordsDir ? dirname(recordsDir) : undefined;
  const findings: Finding[] = [];

  for (const file of files) {
    if (skipped.some((prefix) => file.startsWith(prefix))) continue;
    const isDoc = file.endsWith('.md') && (file === 'README.md' || file.startsWith('docs/'));
    const isCode = CODE.test(file);
    const isHash = !isCode && (HASH_COMMENTED.test(file) || HASH_FOLDERS.some((f) => file.startsWith(f)));
    if (!isDoc && !isCode && !isHash) continue;
    const source = readFileSync(join(root, file), 'utf8');
    const texts = isDoc ? allLines(source) : isCode ? codeComments(source, file) : hashComments(source);
    const here = dirname(join(root, file));
    const report = (line: number, message: string) => findings.push({ file, line, message });

    for (const { line, text, literal } of texts) {
      const withoutUrls = text.replace(URL, ' ');

      if ((isCode || isHash || file === 'README.md') && ISSUE.test(withoutUrls)) {
        report(line, `"${ISSUE.exec(withoutUrls)?.[0]}": cite the decision record or the spec section`);
      }

      if (literal) continue;
      const seen = new Set<string>();
      const check = (raw: string, base: string, always: boolean) => {
        const path = raw
          .replace(/[#?].*$/, '')
          .replace(/:\d+(-\d+)?$/, '')
          .replace(/[.,;:)'"`]+$/, '');
        if (path === '' || seen.has(path) || /[*{}<>$[\]]|NNNN/.test(path)) return;
        seen.add(path);
        const last = path.split('/').pop() ?? '';
        // Not a file's name: a unit (workflows/s) or an acronym (worker/API).
        if (!last.includes('.') && !path.endsWith('/') && (last.length < 2 || /^[A-Z]+$/.test(last))) return;
        const isRelative = path.startsWith('./') || path.startsWith('../');
        if (!always && !isRelative && !topLevel.has(path.split('/')[0] ?? '')) return;
        // A link's target from the file's folder, as a renderer follows it; a relative path in prose from
        // there or from the root (prose often writes one from the root); any other path from the root.
        const bases = always ? [base] : isRelative ? [base, root] : [root];
        const outside = (p: string) => p.startsWith('..') || p.split(sep)[0] === 'node_modules';
        const candidates = bases.map((b) => normalize(join(b, path)));
        if (candidates.some((c) => outside(relative(root, c)))) return; // not ours: outside the tree
        if (!candidates.some(resolves)) report(line, `${path} does not exist`);
      };

      if (isDoc) {
        for (const m of withoutUrls.matchAll(MD_LINK)) {
          const target = m[1] ?? '';
          if (/^([a-z]+:|#)/i.test(target)) continue;
          check(target, here, true);
        }
      }
      for (const m of withoutUrls.matchAll(CANDIDATE)) check(m[0], here, false);
      for (const m of withoutUrls.matchAll(SECTION)) {
        const [, path = '', title = ''] = m;
        const isRelative = path.startsWith('./') || path.startsWith('../');
        const target = [...(isRelative ? [here] : []), root].map((b) => join(b, path)).find((f) => existsSync(f));
        const t = title.trim().toLowerCase();
        // The heading may say more (its topic's number after it), or the words after it go on.
        const named = (h: string) => h.startsWith(t) || t.startsWith(h.replace(/ \(.*$/, ''));
        if (target && !headings(target).some(named)) {
          report(line, `${path} has no section "${title.trim()}"`);
        }
      }
      if (recordsFolder) {
        for (const m of withoutUrls.matchAll(RECORD_NAME)) {
          if (!existsSync(join(root, recordsFolder, m[0]))) report(line, `${m[0]} is no decision record`);
        }
      }
    }
  }

  findings.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  for (const f of findings) process.stderr.write(`${f.file}:${f.line}: ${f.message}\n`);
  if (findings.length > 0) {
    process.stderr.write(`[pointers] ${findings.length} pointer(s) lead nowhere\n`);
    process.exit(1);
  }
}

main();
