import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { TestService } from '../../support/service';

const run = promisify(execFile);

/** The Temporal CLI's view of a workflow's history, optionally through the codec server. */
export async function cliHistory(svc: TestService, workflowId: string, codec?: { endpoint: string; auth: string }) {
  const args = ['workflow', 'show', '-w', workflowId, '--address', svc.config.TEMPORAL_ADDRESS];
  args.push('--namespace', svc.config.TEMPORAL_NAMESPACE, '-o', 'json', '--command-timeout', '60s');
  if (codec) args.push('--codec-endpoint', codec.endpoint, '--codec-auth', codec.auth);
  const { stdout } = await run(process.env.TEMPORAL_CLI!, args, { timeout: 90_000, maxBuffer: 16 * 1024 * 1024 });
  // `-o json` shows each payload's data as base64: what a reader of the output could decode is searched too.
  const decoded = [...stdout.matchAll(/"data":\s*"([A-Za-z0-9+/=]*)"/g)].map((m) => Buffer.from(m[1]!, 'base64'));
  return `${stdout}\n${decoded.map((d) => d.toString('latin1')).join('\n')}`;
}
