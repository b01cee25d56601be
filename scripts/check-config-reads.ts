/**
 * Every configuration key is read (part of `npm run -s lint:unused`, in `npm test`). Fails, naming the
 * key, when the config schema (`ConfigSchema = z.object({...})`, found in the tree, not by its path,
 * with the parts it spreads in) validates a key that no code outside the schema's own files reads.
 * A read is a property access (`config.KEY`, `cfg.KEY`, `deps.config.KEY`), an element access with
 * the key's name, or a destructuring (`const { KEY } = config`). Setting a key (`env.KEY = …`,
 * `{ KEY: '…' }` handed to a child process) is not reading it, nor is a look at the raw environment
 * (`process.env.KEY`), nor a test's read: a key only a test reads configures nothing. A key read from
 * the environment before or beside the configuration (the logger's level, an OpenTelemetry exporter's
 * endpoint) says so with a `@readBy <who>` tag in its doc comment in the schema.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..');
const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/;

function codeFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: root,
    encoding: 'utf8',
  });
  return out.split('\0').filter((f) => CODE.test(f) && !f.endsWith('.d.ts') && existsSync(join(root, f)));
}

const isTest = (file: string) => file.startsWith('test/') || /\.test\.[cm]?[jt]s$/.test(file);

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
}

/** Where a key is declared: its file and line. */
interface Declared {
  file: string;
  line: number;
}

/**
 * The keys of an object literal: written in it, or spread into it from a `const` of this file or
 * imported from a relative module (lib/runtime/settings/*.ts), as ConfigSchema is built. A key whose
 * doc comment carries `@readBy` is left out. Every file visited is added to `files`.
 */
function literalKeys(
  file: string,
  literal: ts.ObjectLiteralExpression,
  keys: Map<string, Declared>,
  files: Set<string>,
) {
  files.add(file);
  const source = literal.getSourceFile();
  for (const p of literal.properties) {
    if (ts.isSpreadAssignment(p) && ts.isIdentifier(p.expression)) {
      const found = constLiteral(file, p.expression.text);
      if (!found) throw new Error(`[config-reads] ${file}: cannot follow the spread ...${p.expression.text}`);
      literalKeys(found.file, found.literal, keys, files);
      continue;
    }
    const readElsewhere = ts.getJSDocTags(p).some((t) => t.tagName.text === 'readBy');
    if (p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) && !readElsewhere) {
      keys.set(p.name.text, { file, line: source.getLineAndCharacterOfPosition(p.getStart(source)).line + 1 });
    }
  }
}

/** The object literal a `const name = {...}` of this file holds, or of the relative module it imports `name` from. */
function constLiteral(file: string, name: string): { file: string; literal: ts.ObjectLiteralExpression } | undefined {
  const source = parse(file);
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) {
        if (d.name.getText(source) === name && d.initializer && ts.isObjectLiteralExpression(d.initializer)) {
          return { file, literal: d.initializer };
        }
      }
    }
    if (
      ts.isImportDeclaration(statement) &&
      ts.isStringLiteral(statement.moduleSpecifier) &&
      statement.moduleSpecifier.text.startsWith('.') &&
      statement.importClause?.namedBindings &&
      ts.isNamedImports(statement.importClause.namedBindings)
    ) {
      const element = statement.importClause.namedBindings.elements.find((e) => e.name.text === name);
      if (element) {
        const target = join(dirname(file), `${statement.moduleSpecifier.text}.ts`);
        return constLiteral(target, (element.propertyName ?? element.name).text);
      }
    }
  }
  return undefined;
}

/** The file that declares ConfigSchema, every file its `z.object({...})` takes keys from, and those keys. */
function schemaKeys(files: string[]): { schemaFile: string; files: Set<string>; keys: Map<string, Declared> } {
  for (const file of files) {
    if (isTest(file) || !readFileSync(join(root, file), 'utf8').includes('ConfigSchema = z.object(')) continue;
    const source = parse(file);
    const keys = new Map<string, Declared>();
    const declaring = new Set<string>();
    const visit = (node: ts.Node) => {
      if (
        ts.isVariableDeclaration(node) &&
        node.name.getText(source) === 'ConfigSchema' &&
        node.initializer &&
        ts.isCallExpression(node.initializer)
      ) {
        const shape = node.initializer.arguments[0];
        if (shape && ts.isObjectLiteralExpression(shape)) literalKeys(file, shape, keys, declaring);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    if (keys.size > 0) return { schemaFile: file, files: declaring, keys };
  }
  throw new Error('[config-reads] no `ConfigSchema = z.object({...})` found in the tree');
}

function isWritten(node: ts.Expression): boolean {
  const parent = node.parent;
  return (
    ts.isBinaryExpression(parent) && parent.left === node && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken
  );
}

/** `process.env.KEY`, `env.KEY`: the environment a script hands on, not the validated configuration. */
function ofEnv(node: ts.PropertyAccessExpression | ts.ElementAccessExpression): boolean {
  return /(^|\.)env$/i.test(node.expression.getText());
}

function main(): void {
  const files = codeFiles();
  const { schemaFile, files: declaring, keys } = schemaKeys(files);
  const read = new Set<string>();
  for (const file of files) {
    if (declaring.has(file) || isTest(file)) continue;
    const source = parse(file);
    const visit = (node: ts.Node) => {
      if (ts.isPropertyAccessExpression(node) && keys.has(node.name.text) && !isWritten(node) && !ofEnv(node)) {
        read.add(node.name.text);
      } else if (
        ts.isElementAccessExpression(node) &&
        ts.isStringLiteralLike(node.argumentExpression) &&
        keys.has(node.argumentExpression.text) &&
        !isWritten(node) &&
        !ofEnv(node)
      ) {
        read.add(node.argumentExpression.text);
      } else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
        const name = node.propertyName ?? node.name;
        if ((ts.isIdentifier(name) || ts.isStringLiteral(name)) && keys.has(name.text)) read.add(name.text);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  const unread = [...keys].filter(([key]) => !read.has(key));
  for (const [key, { file, line }] of unread) {
    process.stderr.write(
      `${file}:${line}: ${key} is validated but nothing outside ${schemaFile} and its parts reads it\n`,
    );
  }
  if (unread.length > 0) {
    process.stderr.write(`[config-reads] ${unread.length} configuration key(s) read by nothing: wire or remove\n`);
    process.exit(1);
  }
}

main();
