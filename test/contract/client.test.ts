import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { actor, approveKyc, newOrg } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { setAFlow, setBFlow } from './client-flow';

/**
 * The generated client (openapi-typescript types + openapi-fetch) against the running service:
 * the committed types are what the served document generates today, and the typed flow programs
 * run a whole Set A and Set B flow end to end.
 */
describe.each(['A', 'B'] as const)('the generated client, Set %s', (set) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ set });
  }, 120_000);
  afterAll(() => svc?.stop());

  it('has types that are exactly what the served document generates', async () => {
    const root = join(__dirname, '..', '..');
    const { stdout } = await promisify(execFile)(
      'npm',
      ['run', '-s', 'client-types', '--', '--print', set, svc.baseUrl],
      { cwd: root, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
    );
    const committed = readFileSync(join(__dirname, 'generated', `set-${set.toLowerCase()}.ts`), 'utf8');
    // Out of date: run `npm run -s client-types` and commit test/contract/generated.
    expect(stdout).toBe(committed);
  });

  it('runs the whole flow through the typed client', async () => {
    const org = newOrg();
    const staff = await actor(svc, org, ['staff']);
    const investor = await actor(svc, org, ['investor'], { kycCompleted: true });
    await approveKyc(svc, investor);
    const run = randomUUID();
    const key = (step: string) => `${run}-${step}`;
    const actors = { baseUrl: svc.baseUrl, investor: investor.token, staff: staff.token };

    if (set === 'A') {
      const r = await setAFlow(actors, key);
      expect(r.card).toMatchObject({ status: 'completed', payment_status: 'in_escrow', investor_id: investor.userId });
      expect(r.foundBeforeReconcile).toMatchObject({ status: 'pending_review', payment_status: 'pending' });
      expect(r.wire).toMatchObject({ status: 'completed', payment_status: 'in_escrow' });
      expect(r.endpoint.signing_secret).toMatch(/^whsec_/);
    } else {
      const r = await setBFlow(actors, key);
      expect(r.issued).toMatchObject({ status: 'completed', investor_id: investor.userId });
      expect(r.issued.shares_id).toEqual(expect.any(String));
      expect(r.listed).toContain(r.issued.id);
    }
  }, 180_000);
});
