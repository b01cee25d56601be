import { testDataConverter } from '../../support/data-converter';
import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { Client, Connection } from '@temporalio/client';
import { AccessTokens } from '../../../identity/access-tokens';
import { subscriptionWorkflowId } from '../../../domain/subscription';
import { until } from '../../support/wait';
import { getSubscription } from '../../../domain/subscription-messages';
import { http } from '../../support/http';
import { createOffering, createSubscription } from '../../support/fixtures';

/** The events a Set A wire subscription publishes from creation to completion, in order. */
export const WIRE_FLOW_EVENTS = [
  'subscription.created',
  'subscription.signed',
  'subscription.approved',
  'subscription.funded',
  'subscription.completed',
];

/**
 * A Set A world driven over HTTP against a service run as processes: staff, a KYC-approved investor
 * (recorded straight in the database, as the provider would), an offering at 100.00 a unit.
 */
export async function wireFlowWorld(opts: { baseUrl: string; pem: string; databaseUrl: string }) {
  const tokens = await AccessTokens.create({ privateKeyPem: opts.pem, ttlSeconds: 3600 });
  const org = randomUUID();
  const staff = await tokens.sign({ userId: 'staff-1', orgId: org, roles: ['staff'], kycCompleted: false });
  const investor = await tokens.sign({ userId: 'investor-1', orgId: org, roles: ['investor'], kycCompleted: true });
  // The staff member's console session, as a sign-in opens one (docs/decisions/0271-console-sessions-server-side.md).
  const session = randomUUID();
  await sql(
    opts.databaseUrl,
    `insert into console_sessions (id, org_id, user_id, roles, created_at, expires_at)
       values ($1, $2, 'staff-1', '{staff}', now(), now() + interval '12 hours')`,
    [session, org],
  );
  const consoleStaff = await tokens.sign({
    userId: 'staff-1',
    orgId: org,
    roles: ['staff'],
    kycCompleted: false,
    consoleSession: session,
  });
  await sql(
    opts.databaseUrl,
    `insert into kyc_verifications (org_id, user_id, status) values ($1, 'investor-1', 'approved')`,
    [org],
  );
  const api = http(opts.baseUrl);
  const offering = await createOffering(api, staff, {
    offering: { name: 'Faults' },
    securityClass: { name: 'Common', pricePerUnit: '100.00' },
  });
  const sub = (id: string, op: string, token: string, body: unknown = {}) =>
    api.post(`/issuance/subscriptions/${id}/${op}`, token, body);

  return {
    org,
    tokens: { staff, investor, consoleStaff },
    /** draft -> pending_signature -> pending_payment -> pending_review (wire). */
    async toReview(): Promise<{ id: string; reference_code: string }> {
      const s = await expectOk(createSubscription(api, investor, offering), 201);
      await expectOk(sub(s.id, 'request-signature', investor));
      await expectOk(
        sub(s.id, 'sign-agreement', investor, { signature: 'Ada Lovelace', signedAt: '2026-11-21T10:00:00Z' }),
      );
      return expectOk(sub(s.id, 'submit-for-review', investor, { paymentMethod: 'wire' }));
    },
    /** draft -> … -> pending_review by card (Set A): the setup session paid at the sandbox, then finalized. */
    async toReviewByCard(): Promise<{ id: string }> {
      const s = await expectOk(createSubscription(api, investor, offering), 201);
      await expectOk(sub(s.id, 'request-signature', investor));
      await expectOk(
        sub(s.id, 'sign-agreement', investor, { signature: 'Ada Lovelace', signedAt: '2026-11-21T10:00:00Z' }),
      );
      const setup = await expectOk(
        sub(s.id, 'create-setup-session', investor, {
          paymentMethod: 'card',
          successUrl: 'https://investor.example/done',
          cancelUrl: 'https://investor.example/cancelled',
        }),
      );
      const paid = await fetch(`${setup.session_url}/complete`, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(30_000),
      });
      if (paid.status !== 303) throw new Error(`setup session: ${paid.status}`);
      await expectOk(sub(s.id, 'finalize-setup', investor));
      return expectOk(sub(s.id, 'submit-for-review', investor, {}));
    },
    approve: (id: string) => expectOk(sub(id, 'approve', staff)),
    reconcile: (referenceCode: string) =>
      expectOk(
        api.post(
          '/issuance/reconciliations',
          staff,
          { referenceCode, amount: '500.00' },
          // Required where money moves (docs/decisions/0373-idempotency-key-required-where-money-moves.md).
          { 'idempotency-key': `reconcile-${referenceCode}` },
        ),
      ),
    get: (id: string) => expectOk(api.get(`/issuance/subscriptions/${id}`, investor)),
  };
}

/** How long a test keeps retrying a command that may meet a restarting dependency, and how often. */
export const THROUGH_A_RESTART = { timeoutMs: 120_000, intervalMs: 500 };

export interface Verdict {
  status: string;
  projectionEqualsWorkflow: boolean;
  eventCounts: Record<string, number>;
  /** When they differ: each differing field, as the workflow and the projection hold it. */
  differences?: Record<string, { workflow: unknown; projection: unknown }>;
}

/**
 * What a fault test checks after recovery, for one subscription: its status, whether the projection
 * (subscriptions.state) equals the workflow's own getSubscription, and how often each event is in
 * the outbox. The projection is written by an activity after each transition, so it is given time.
 */
export async function verdict(
  opts: { databaseUrl: string; temporalAddress: string },
  id: string,
  timeoutMs = 60_000,
): Promise<Verdict> {
  const connection = await Connection.connect({ address: opts.temporalAddress, connectTimeout: '10s' });
  try {
    const client = new Client({ connection, dataConverter: testDataConverter() });
    let workflow: unknown;
    let projection: unknown;
    const same = async () => {
      workflow = await client.workflow.getHandle(subscriptionWorkflowId(id)).query(getSubscription);
      projection = (await sql(opts.databaseUrl, 'select state from subscriptions where id = $1', [id]))[0]?.state;
      return JSON.stringify(normalise(workflow)) === JSON.stringify(normalise(projection));
    };
    // Not equal in time is a verdict, not an error: the caller's expectation names the difference.
    await until(`the projection of ${id} to equal its workflow`, same, { timeoutMs, intervalMs: 500 }).catch(
      () => undefined,
    );
    const rows = await sql(
      opts.databaseUrl,
      `select type, count(*)::int as n from events where data->>'id' = $1 or data->>'subscription_id' = $1 group by type`,
      [id],
    );
    const equal = JSON.stringify(normalise(workflow)) === JSON.stringify(normalise(projection));
    return {
      status: (workflow as { status: string }).status,
      projectionEqualsWorkflow: equal,
      eventCounts: Object.fromEntries(rows.map((r) => [r.type as string, r.n as number])),
      ...(equal ? {} : { differences: differences(workflow, projection) }),
    };
  } finally {
    await connection.close();
  }
}

function differences(
  workflow: unknown,
  projection: unknown,
): Record<string, { workflow: unknown; projection: unknown }> {
  const w = (workflow ?? {}) as Record<string, unknown>;
  const p = (projection ?? {}) as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(w), ...Object.keys(p)])];
  return Object.fromEntries(
    keys
      .filter((k) => JSON.stringify(normalise(w[k])) !== JSON.stringify(normalise(p[k])))
      .map((k) => [k, { workflow: w[k], projection: p[k] }]),
  );
}

/** Key order differs between a JS object and jsonb; compare as sorted JSON. */
function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, normalise(v)]),
    );
  return value;
}

export async function sql(
  databaseUrl: string,
  text: string,
  params: unknown[] = [],
): Promise<Record<string, unknown>[]> {
  const client = new PgClient({ connectionString: databaseUrl, connectionTimeoutMillis: 5000, query_timeout: 10_000 });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

async function expectOk(call: Promise<{ status: number; body: any }>, status = 200): Promise<any> {
  const res = await call;
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}
