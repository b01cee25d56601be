import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort } from '../../scripts/lib/free-port';
import { stopProcess } from '../../scripts/lib/temporal-dev-server';
import { until } from '../support/wait';
import { toolPath } from '../support/tools';

const MOCK_CUSTOMER = 'cus_tranche_investor';
const MOCK_PAYMENT_METHOD = 'pm_tranche_card';

/**
 * stripe-mock (scripts/tools.sh stripe-mock) on a free port. It is stateless and answers from
 * fixtures; ours differ from the bundled ones in one way: a Checkout Session reads back as an
 * investor would leave it, complete, its SetupIntent holding a card on a Customer.
 */
export async function startStripeMock(
  opts: { completedSessions?: boolean } = {},
): Promise<{ url: string; stop(): Promise<void> }> {
  const bin = toolPath('stripe-mock');
  const fixtures = JSON.parse(readFileSync(join(dirname(bin), 'fixtures3.json'), 'utf8'));
  const r = fixtures.resources;
  if (opts.completedSessions !== false) {
    r['checkout.session'] = {
      ...r['checkout.session'],
      status: 'complete',
      customer: MOCK_CUSTOMER,
      setup_intent: 'seti_tranche_setup',
    };
    r['setup_intent'] = {
      ...r['setup_intent'],
      status: 'succeeded',
      customer: MOCK_CUSTOMER,
      payment_method: MOCK_PAYMENT_METHOD,
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'stripe-mock-'));
  const file = join(dir, 'fixtures.json');
  writeFileSync(file, JSON.stringify(fixtures));

  const port = await freePort();
  // Its HTTPS listener defaults to port 12112: a second stripe-mock (a parallel test file) would
  // fail to bind it and exit, so it gets a free port of its own too.
  const httpsPort = await freePort();
  const child = spawn(
    bin,
    ['-http-addr', `127.0.0.1:${port}`, '-https-addr', `127.0.0.1:${httpsPort}`, '-fixtures', file],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  child.stderr!.resume();
  const url = `http://127.0.0.1:${port}`;
  const answers = async () => {
    if (child.exitCode !== null) throw new Error(`stripe-mock exited (${child.exitCode})`);
    return fetch(`${url}/v1/customers`, {
      headers: { authorization: 'Bearer sk_test_ready' },
      signal: AbortSignal.timeout(1000),
    }).then(
      (res) => res.ok,
      () => false, // not listening yet
    );
  };
  await until('stripe-mock to start', answers, { timeoutMs: 30_000 });
  return {
    url,
    async stop() {
      await stopProcess(child, 5000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
