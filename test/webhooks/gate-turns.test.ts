import { Client as PgClient } from 'pg';
import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { PATHS, registerHook } from './support/hooks';
import { anEvent, publish } from './support/publish';
import type { Receiver } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';
import { until } from '../support/wait';

/**
 * `workflow` shape (docs/decisions/0335-gate-turns-per-endpoint.md): every attempt passes its
 * endpoint's gate under the endpoint's flow row lock. A burst's attempts to one endpoint used to
 * wait for that lock each on a pooled connection, so the worker's pool filled with one endpoint's
 * waiters and every other organisation's attempt queued behind them for a connection.
 */
describe("workflow shape: one endpoint's burst never holds the worker's database pool", () => {
  let svc: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    ({ svc, receiver } = await startWebhookStack('A', { WEBHOOK_DELIVERY_SHAPE: 'workflow', DATABASE_POOL_MAX: '10' }));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  it("keeps at most one of a worker's connections waiting on an endpoint's gate, while another organisation's event arrives", async () => {
    const x = await actor(svc, newOrg(), ['staff']);
    const y = await actor(svc, newOrg(), ['staff']);
    const [bursty, quiet] = ['turns-x-burst', 'turns-y-quiet'];
    const burst = await registerHook(svc, receiver, x, bursty, ['subscription.approved'], { delayMs: 100 });
    const patched = await http(svc.baseUrl).patch(`${PATHS.A.endpoints}/${burst.id}`, x.token, { maxInFlight: 4 });
    expect(patched.status).toBe(200);
    await registerHook(svc, receiver, y, quiet, ['subscription.approved']);

    // The service's own role sees its sessions' statements and what each waits on.
    const pg = new PgClient({ connectionString: svc.config.DATABASE_URL, connectionTimeoutMillis: 5000 });
    await pg.connect();
    let sampling = true;
    let mostWaiting = 0;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await pg.query(
          `select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and query like '%for update of f%'`,
        );
        mostWaiting = Math.max(mostWaiting, rows[0].n);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    try {
      const burstAt = Date.now();
      await publish(
        svc,
        Array.from({ length: 400 }, () => anEvent(x.orgId)),
      );
      // The burst's first attempts all reach the gate within its first seconds: sampled over at least
      // 5 s of them. How soon Y's event arrives is a benchmark's question (isolation.test.ts times it in
      // the engine shape); here, that it arrives while the burst's attempts take their turns.
      await receiver.waitFor(bursty, 4, 30_000);
      await publish(svc, [anEvent(y.orgId)]);
      expect(await receiver.waitFor(quiet, 1, 30_000)).toHaveLength(1);
      await new Promise((r) => setTimeout(r, Math.max(0, burstAt + 5000 - Date.now())));
    } finally {
      sampling = false;
      await sampler;
      await pg.end();
    }
    // One gate at a time per endpoint in this worker; at most it waits on the recorder's update of the row.
    expect(mostWaiting).toBeLessThanOrEqual(1);
  });

  // Most attempts read the flow row without a transaction; a probe is written under the row's lock.
  it('lets one probe through when a burst meets an open circuit whose cool-down has passed', async () => {
    const x = await actor(svc, newOrg(), ['staff']);
    const hook = 'turns-x-probe';
    const endpoint = await registerHook(svc, receiver, x, hook, ['subscription.approved'], { delayMs: 500 });
    const pg = new PgClient({ connectionString: svc.config.DATABASE_URL, connectionTimeoutMillis: 5000 });
    await pg.connect();
    try {
      await pg.query(
        `update webhook_endpoint_flow
            set circuit_state = 'open', consecutive_failures = 5, opened_at = now() - interval '1 minute',
                probe_at = now() - interval '1 second'
          where endpoint_id = $1`,
        [endpoint.id],
      );
      await publish(
        svc,
        Array.from({ length: 6 }, () => anEvent(x.orgId)),
      );
      // The probe's POST takes half a second; the others find the circuit half-open meanwhile.
      expect(await receiver.waitFor(hook, 1, 30_000)).toHaveLength(1);
      const held = async () =>
        (
          await pg.query(
            `select count(*)::int as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
              where d.endpoint_id = $1 and a.error like 'CIRCUIT_OPEN:%'`,
            [endpoint.id],
          )
        ).rows[0].n as number;
      await until('the five others recorded held', held, (n) => n >= 5, { timeoutMs: 30_000 });
      expect(await held()).toBe(5);
      expect(await receiver.received(hook)).toHaveLength(1);
    } finally {
      await pg.end();
    }
  });
});
