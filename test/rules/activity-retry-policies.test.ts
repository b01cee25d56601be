import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { CONSTRAINT_REFUSED, DATA_REFUSED, retryPolicy } from '../../domain/activity-failures';

/**
 * No workflow retries an activity without end for a failure retrying cannot cure
 * (docs/decisions/0364-refused-records-end-the-command.md): every activity and local activity a
 * workflow calls is declared through proxyActivities or proxyLocalActivities, and each declaration's
 * retry policy is built by retryPolicy (domain/activity-failures.ts), which names PostgreSQL's data
 * and constraint refusals as not retryable. Read from the source with the TypeScript parser, so a
 * new call site without it fails here, whatever its backoff.
 */
const WORKFLOWS = join(__dirname, '../../workflows');
const PROXIES = new Set(['proxyActivities', 'proxyLocalActivities']);
/** Ways to schedule an activity that bypass the proxies' options: none may appear in workflow code. */
const BYPASSES = /\b(scheduleActivity|scheduleLocalActivity)\b/;

interface CallSite {
  file: string;
  line: number;
  proxy: string;
  /** The text of the options' `retry` initializer, or null when there is none. */
  retry: string | null;
}

function callSites(file: string): CallSite[] {
  const text = readFileSync(join(WORKFLOWS, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: CallSite[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && PROXIES.has(node.expression.text)) {
      const options = node.arguments[0];
      const retry =
        options && ts.isObjectLiteralExpression(options)
          ? options.properties.find(
              (p): p is ts.PropertyAssignment =>
                ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'retry',
            )
          : undefined;
      found.push({
        file,
        line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
        proxy: node.expression.text,
        retry: retry ? retry.initializer.getText(source) : null,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("every workflow's activity retry policy", () => {
  const files = readdirSync(WORKFLOWS).filter((f) => f.endsWith('.ts'));
  const sites = files.flatMap(callSites);

  it('finds the call sites it checks (the activities of the subscription, delivery, recovery, retention and audit workflows)', () => {
    expect([...new Set(sites.map((s) => s.file))].sort()).toEqual([
      'audit-checkpoint.ts',
      'commitment-sweep.ts',
      'refund-intents.ts',
      'retention-prune.ts',
      'subscription-run.ts',
      'webhook-delivery.ts',
      'webhook-recovery.ts',
    ]);
    expect(sites.filter((s) => s.proxy === 'proxyLocalActivities').map((s) => s.file)).toEqual([
      'refund-intents.ts',
      'refund-intents.ts',
      'subscription-run.ts',
      'webhook-delivery.ts',
    ]);
  });

  it('builds each one with retryPolicy, which never retries a refused value or row', () => {
    const unclassified = sites
      .filter((s) => s.retry === null || !/^retryPolicy\(/.test(s.retry))
      .map((s) => `${s.file}:${s.line} ${s.proxy} retry: ${s.retry ?? '(the SDK default: unbounded)'}`);
    expect(unclassified).toEqual([]);
    expect(retryPolicy({ initialInterval: '1s' }).nonRetryableErrorTypes).toEqual(
      expect.arrayContaining([DATA_REFUSED, CONSTRAINT_REFUSED]),
    );
  });

  it('schedules no activity past the proxies', () => {
    const bypassing = files.filter((f) => BYPASSES.test(readFileSync(join(WORKFLOWS, f), 'utf8')));
    expect(bypassing).toEqual([]);
  });
});
