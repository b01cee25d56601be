import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { AccessTokens } from '../../identity/access-tokens';
import { subscriptionWorkflowId } from '../../domain/subscription';
import { freePort } from '../../scripts/lib/free-port';
import { createOffering, createSubscription } from '../support/fixtures';
import { http } from '../support/http';
import { freshDatabase } from '../support/service';
import { testDataConverter } from '../support/data-converter';
import { until } from '../support/wait';
import { spawnService, waitReady, type ServiceProcess } from './support/processes';
import { startServicePair, type ServicePair } from './support/service-pair';

/** The sweep's windows in this test: a commitment 10 s old with no workflow is freed, looked for every 2 s. */
const GRACE_SECONDS = 10;

/**
 * An API process killed with SIGKILL between a create's capacity hold and its workflow start
 * (docs/decisions/0371-commitment-sweep.md). The commitment it took has no subscription and no
 * workflow; the commitment sweep on the worker process asks Temporal, finds none, and gives it back:
 * the offering's committed amount returns exactly to what it was, and a live draft's stays held.
 */
describe('an API killed between the capacity hold and the workflow start', () => {
  let pair: ServicePair;
  let paused: ServiceProcess;
  let pausedUrl: string;
  let databaseUrl: string;
  const temporalAddress = process.env.TEMPORAL_ADDRESS!;

  beforeAll(async () => {
    databaseUrl = await freshDatabase();
    pair = await startServicePair({
      databaseUrl,
      temporalAddress,
      extra: {
        // The pause point below exists only under NODE_ENV=test (lib/runtime/config.ts).
        NODE_ENV: 'test',
        COMMAND_TIMEOUT_MS: '5000',
        COMMITMENT_SWEEP_INTERVAL_SECONDS: '2',
        COMMITMENT_SWEEP_GRACE_SECONDS: String(GRACE_SECONDS),
      },
    });
    // A second API process on the same database and queue that pauses after every capacity hold.
    const port = await freePort();
    pausedUrl = `http://127.0.0.1:${port}`;
    paused = spawnService(
      'server/main.ts',
      {
        ...pair.env,
        PORT: String(port),
        PUBLIC_BASE_URL: pausedUrl,
        TEST_PAUSE_AT: 'capacity-held',
      },
      'api-paused',
    );
    await waitReady(pausedUrl, 120_000);
  }, 300_000);
  afterAll(async () => {
    await paused?.stop();
    await pair?.stop();
  });

  async function sql<T = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
    const pg = new PgClient({ connectionString: databaseUrl });
    await pg.connect();
    try {
      return (await pg.query(text, values)).rows as T[];
    } finally {
      await pg.end();
    }
  }

  it('gives the held capacity back once the sweep finds no workflow, and nothing else', async () => {
    const tokens = await AccessTokens.create({ privateKeyPem: pair.pem, ttlSeconds: 3600 });
    const org = randomUUID();
    const staff = await tokens.sign({ userId: 'staff-1', orgId: org, roles: ['staff'], kycCompleted: false });
    const investors = await Promise.all(
      ['alice', 'bob'].map((userId) => tokens.sign({ userId, orgId: org, roles: ['investor'], kycCompleted: true })),
    );
    const [alice, bob] = investors as [string, string];
    await sql(
      `insert into kyc_verifications (org_id, user_id, status) values ($1, 'alice', 'approved'), ($1, 'bob', 'approved')`,
      [org],
    );
    const api = http(pair.baseUrl);
    const offering = await createOffering(api, staff, {
      offering: { name: 'Stranded', maxAmount: '500.00' },
      securityClass: { name: 'Common', pricePerUnit: '100.00' },
    });
    const committed = async () =>
      (await api.get(`/issuance/offerings/${offering.offeringId}`, staff)).body.data.committed_amount as string;

    const live = await createSubscription(api, alice, offering, { unitsSubscribed: 3 });
    expect(live.status).toBe(201);
    const before = await committed();
    expect(before).toBe('300.00');

    // The create through the pausing API holds 200.00, then waits before its workflow start: killed there.
    const since = paused.logs().length;
    const dying = createSubscription(http(pausedUrl), bob, offering, { unitsSubscribed: 2 }).catch((err: Error) => err);
    await paused.waitForLog(/test pause point reached/, 60_000, since);
    await paused.kill9();
    // No answer: the connection died with the process (undici's TypeError, from another realm than jest's Error).
    expect(await dying).toMatchObject({ message: 'fetch failed' });

    const [stranded] = await sql<{ subscription_id: string; released_at: Date | null }>(
      `select subscription_id, released_at from offering_commitments
        where offering_id = $1 and subscription_id <> $2`,
      [offering.offeringId, live.body.data.id],
    );
    expect(stranded).toMatchObject({ released_at: null });
    expect(await committed()).toBe('500.00');
    expect(await sql(`select id from subscriptions where id = $1`, [stranded!.subscription_id])).toEqual([]);
    const temporal = new Client({
      connection: await Connection.connect({ address: temporalAddress }),
      dataConverter: testDataConverter(),
    });
    await expect(
      temporal.workflow.getHandle(subscriptionWorkflowId(stranded!.subscription_id)).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
    await temporal.connection.close();
    // Until the sweep, the dead create's hold blocks everyone else.
    const blocked = await createSubscription(api, bob, offering, { unitsSubscribed: 1 });
    expect([blocked.status, blocked.body.error.code]).toEqual([409, 'OFFERING_FULL']);

    const after = await until('the sweep to give the stranded commitment back', committed, (c) => c === before, {
      timeoutMs: (GRACE_SECONDS + 60) * 1000,
      intervalMs: 500,
    });
    expect(after).toBe(before);
    const rows = await sql<{ subscription_id: string; released: boolean; released_because: string | null }>(
      `select subscription_id, released_at is not null as released, released_because from offering_commitments
        where offering_id = $1 order by created_at`,
      [offering.offeringId],
    );
    expect(rows).toEqual([
      { subscription_id: live.body.data.id, released: false, released_because: null },
      { subscription_id: stranded!.subscription_id, released: true, released_because: 'never_started' },
    ]);
    await pair.workers[0]!.waitForLog(/commitment of a create whose workflow never started given back/);
    // The live draft is untouched, and the freed 200.00 is there to take.
    expect((await api.get(`/issuance/subscriptions/${live.body.data.id}`, alice)).body.data.status).toBe('draft');
    expect((await createSubscription(api, bob, offering, { unitsSubscribed: 2 })).status).toBe(201);
    expect(await committed()).toBe('500.00');
  }, 180_000);
});
