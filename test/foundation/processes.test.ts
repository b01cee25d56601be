import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Client as PgClient } from 'pg';
import { AccessTokens } from '../../identity/access-tokens';
import { freePort } from '../../scripts/lib/free-port';
import { stopProcess } from '../../scripts/lib/temporal-dev-server';
import { http } from '../support/http';
import { freshDatabase } from '../support/service';
import { until } from '../support/wait';

const root = join(__dirname, '..', '..');

/** worker/ and api/ start alone against an external Temporal and PostgreSQL, as deployed. */
describe('the worker and API processes', () => {
  const children: ChildProcess[] = [];
  let baseUrl: string;
  let tokens: AccessTokens;
  let logs = '';
  let databaseUrl: string;

  beforeAll(async () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    tokens = await AccessTokens.create({ privateKeyPem: pem, ttlSeconds: 600 });
    const port = await freePort();
    const env = {
      ...process.env,
      NODE_ENV: 'development',
      DATABASE_URL: (databaseUrl = await freshDatabase()),
      TEMPORAL_TASK_QUEUE: `proc-${randomUUID()}`,
      ACCESS_TOKEN_PRIVATE_KEY: pem,
      PORT: String(port),
      LOG_LEVEL: 'info',
    };
    for (const file of ['worker/main.ts', 'server/main.ts']) {
      const child = spawn(process.execPath, ['--import', 'tsx', join(root, file)], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (d) => (logs += d));
      child.stderr!.on('data', (d) => (logs += d));
      children.push(child);
    }
    baseUrl = `http://127.0.0.1:${port}`;
    // Not ready in time: the tests below fail with what they meet.
    await until(
      'the API to be ready',
      () =>
        fetch(`${baseUrl}/ready`).then(
          (r) => r.ok,
          () => false,
        ),
      { timeoutMs: 90_000, intervalMs: 300 },
    ).catch(() => undefined);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(children.map((c) => stopProcess(c)));
  });

  it('serves /ready once both are up', async () => {
    const res = await http(baseUrl).get('/ready');
    expect(res.status).toBe(200);
  });

  it('runs a subscription command end to end through both processes', async () => {
    const org = randomUUID();
    const staff = await tokens.sign({ userId: 'staff', orgId: org, roles: ['staff'], kycCompleted: false });
    const investor = await tokens.sign({ userId: 'inv', orgId: org, roles: ['investor'], kycCompleted: true });
    const api = http(baseUrl);
    const offering = await api.post('/issuance/offerings', staff, { name: 'Proc', currency: 'EUR' });
    const cls = await api.post(`/issuance/offerings/${offering.body.data.id}/security-classes`, staff, {
      name: 'A',
      pricePerUnit: '1.05',
    });
    const body = { securityClassId: cls.body.data.id, unitsSubscribed: 3 };
    // Set A by default: the live KYC check reads the record, not the token's claim.
    const blocked = await api.post(`/issuance/offerings/${offering.body.data.id}/subscriptions`, investor, body);
    expect(blocked.status).toBe(403);
    expect(blocked.body.error.code).toBe('KYC_REQUIRED');

    const db = new PgClient({ connectionString: databaseUrl });
    await db.connect();
    await db.query(`insert into kyc_verifications (org_id, user_id, status) values ($1, 'inv', 'approved')`, [org]);
    await db.end();
    const created = await api.post(`/issuance/offerings/${offering.body.data.id}/subscriptions`, investor, body);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ total_amount: '3.15', currency: 'EUR', status: 'draft' });
    const got = await api.get(`/issuance/subscriptions/${created.body.data.id}`, investor);
    expect(got.body.data.status).toBe('draft');
  });

  it('stops both cleanly on SIGTERM, the worker draining first', async () => {
    await Promise.all(children.map((c) => stopProcess(c)));
    expect(children.map((c) => c.exitCode ?? c.signalCode)).toEqual([0, 0]);
    expect(logs).toContain('worker stopped');
    expect(logs).not.toMatch(/BEGIN PRIVATE KEY/);
  });
});
