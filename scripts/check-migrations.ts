/**
 * Each migration added since the previous release (deploy/previous-release) is additive for one release
 * (docs/decisions/0389-migrations-expand-then-contract.md): the previous release's services keep running
 * against the migrated schema until the roll is done. Fails, naming the statement, on a drop, rename,
 * type change, new NOT NULL without a default or new constraint, unless the migration says
 * `contract: <name>` and (for a drop or rename) the previous release's code no longer names it.
 * Part of `npm test` (`npm run -s lint:migrations`).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { migrationFindings } from './lib/migration-rules';

const root = join(__dirname, '..');
const git = (...args: string[]) =>
  execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** The SQL of every `this.addSql(...)` in the migration's `up()`, template placeholders kept as written. */
function upStatements(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node, inUp: boolean): void => {
    if (ts.isMethodDeclaration(node)) inUp = node.name.getText() === 'up';
    if (
      inUp &&
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'addSql' &&
      node.arguments[0]
    ) {
      const arg = node.arguments[0];
      out.push(ts.isStringLiteralLike(arg) ? arg.text : arg.getText().slice(1, -1));
    }
    ts.forEachChild(node, (child) => visit(child, inUp));
  };
  visit(source, false);
  // One addSql may hold several statements.
  return out.flatMap((sql) => sql.split(/;\s*(?=\S)/));
}

function main(): number {
  const commit = readFileSync(join(root, 'deploy', 'previous-release'), 'utf8')
    .split('\n')
    .find((l) => l.trim() && !l.startsWith('#'))!
    .trim();
  try {
    git('cat-file', '-e', `${commit}^{commit}`);
  } catch {
    console.error(`[migrations] ${commit} (deploy/previous-release) is not in this clone's history: fetch it`);
    return 1;
  }
  const before = new Set(git('ls-tree', '--name-only', `${commit}:db/migrations`).split('\n').filter(Boolean));
  const added = readdirSync(join(root, 'db', 'migrations')).filter(
    (f) => f !== 'index.ts' && f.endsWith('.ts') && !before.has(f),
  );
  const previousReads = (name: string) => {
    try {
      git(
        'grep',
        '-q',
        '-w',
        '-i',
        '-e',
        name,
        commit,
        '--',
        '.',
        ':(exclude)db/migrations',
        ':(exclude)test',
        ':(exclude)docs',
        ':(exclude)bench',
      );
      return true;
    } catch {
      return false;
    }
  };
  let problems = 0;
  for (const file of added) {
    const path = join(root, 'db', 'migrations', file);
    for (const { finding, why } of migrationFindings(upStatements(path), readFileSync(path, 'utf8'), previousReads)) {
      problems++;
      console.error(
        `[migrations] db/migrations/${file}: ${finding.kind} ${finding.name}: ${why}\n    ${finding.statement}`,
      );
    }
  }
  if (problems) return 1;
  console.log(`[migrations] ${added.length} added since the previous release (${commit.slice(0, 12)}), each additive`);
  return 0;
}

process.exit(main());
