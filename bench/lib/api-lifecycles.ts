import { randomUUID } from 'node:crypto';
import { AccessTokens } from '../../identity';
import type { ServiceProcesses } from './service-processes';
import { pool, summary } from './stats';

const round = (n: number) => Math.round(n * 10) / 10;

/**
 * Set A wire lifecycles (create, sign, submit, approve, reconcile) through the API, each event fanned
 * out to 10 endpoints, `clients` at a time after a warm-up of `warmUp` lifecycles.
 */
export async function lifecyclesPerS(
  svc: Pick<ServiceProcesses, 'baseUrl' | 'accessTokenKeyPem'>,
  databaseUrl: string,
  sizes: { count: number; clients: number; warmUp: number },
  subscribeHooks: (orgId: string) => Promise<void>,
) {
  const { count, clients } = sizes;
  const { Client: Pg } = await import('pg');
  const tokens = await AccessTokens.create({ privateKeyPem: svc.accessTokenKeyPem, ttlSeconds: 3600 });
  const org = randomUUID();
  await subscribeHooks(org);
  const staff = await tokens.sign({ userId: 'staff-1', orgId: org, roles: ['staff'], kycCompleted: true });
  const investor = await tokens.sign({ userId: 'investor-1', orgId: org, roles: ['investor'], kycCompleted: true });
  const db = new Pg({ connectionString: databaseUrl });
  await db.connect();
  await db.query(`insert into kyc_verifications (org_id, user_id, status) values ($1, $2, 'approved')`, [
    org,
    'investor-1',
  ]);
  await db.end();
  const took: Record<string, number[]> = {};
  const call = async (
    method: string,
    path: string,
    token: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const t0 = performance.now();
    const name = path
      .split('/')
      .filter((p) => p && !/^[0-9a-f-]{36}$/.test(p))
      .slice(-1)[0]!;
    const res = await fetch(svc.baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const json = (await res.json()) as { data: Record<string, string> };
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    (took[name] ??= []).push(performance.now() - t0);
    return json.data;
  };
  const offering = await call('POST', '/issuance/offerings', staff, { name: 'Bench', currency: 'USD' });
  const cls = await call('POST', `/issuance/offerings/${offering.id}/security-classes`, staff, {
    name: 'Common',
    pricePerUnit: '10.00',
  });
  const lifecycle = async () => {
    const s = await call('POST', `/issuance/offerings/${offering.id}/subscriptions`, investor, {
      securityClassId: cls.id,
      unitsSubscribed: 3,
    });
    await call('POST', `/issuance/subscriptions/${s.id}/sign-agreement`, investor, {
      signature: 'Bench Investor',
      signedAt: new Date().toISOString(),
    });
    const submitted = await call('POST', `/issuance/subscriptions/${s.id}/submit-for-review`, investor, {
      paymentMethod: 'wire',
    });
    await call('POST', `/issuance/subscriptions/${s.id}/approve`, staff, {});
    // Required where money moves (docs/decisions/0373-idempotency-key-required-where-money-moves.md).
    await call(
      'POST',
      '/issuance/reconciliations',
      staff,
      { referenceCode: submitted.reference_code, amount: '30.00' },
      { 'idempotency-key': randomUUID() },
    );
  };
  await pool(sizes.warmUp, Math.min(8, clients), lifecycle);
  for (const k of Object.keys(took)) delete took[k];
  const t0 = performance.now();
  await pool(count, clients, lifecycle);
  const seconds = (performance.now() - t0) / 1000;
  const commandMs = Object.fromEntries(Object.entries(took).map(([k, v]) => [k, summary(v)]));
  return {
    lifecycles: count,
    endpoints: 10,
    clients,
    seconds: round(seconds),
    lifecycles_per_s: round(count / seconds),
    command_ms: commandMs,
  };
}
