import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Client as PgClient } from 'pg';
import { AccessTokens } from '../../identity/access-tokens';
import type { Role } from '../../domain/principal';
import { freePort } from '../../scripts/lib/free-port';
import { stopProcess } from '../../scripts/lib/temporal-dev-server';
import { startZipkin, type RunningZipkin } from '../../scripts/lib/zipkin';
import { http } from '../support/http';
import { freshDatabase } from '../support/service';
import { Receiver } from '../webhooks/support/receiver';
import { until } from '../support/wait';
import { createOffering, createSubscription } from '../support/fixtures';
import { toolPath } from '../support/tools';
import { root } from './support/traced-process';

/** Traces: on, one trace from the API request to the webhook POST, as Zipkin shows it. */
describe('traces', () => {
  describe('one request followed from the API to the webhook POST, in Zipkin', () => {
    let zipkin: RunningZipkin | undefined;
    let receiver: Receiver;
    const children: ChildProcess[] = [];
    const logs: string[] = [];
    let baseUrl = '';
    let tokens: AccessTokens;
    let databaseUrl = '';

    beforeAll(async () => {
      // Built into the tools cache by npm test before the first test (test/support/tools.ts).
      const jar = toolPath('zipkin');
      // `npm run cluster` starts it the same way (scripts/lib/cluster-stack.ts).
      zipkin = await startZipkin({ jar, port: await freePort(), output: process.stderr });
      receiver = await Receiver.start();
      const privateKeyPem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString();
      tokens = await AccessTokens.create({ privateKeyPem, ttlSeconds: 3600 });
      databaseUrl = await freshDatabase();
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      const env = {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_'))),
        NODE_ENV: 'development',
        LOG_LEVEL: 'info',
        BEHAVIOUR_SET: 'A',
        DATABASE_URL: databaseUrl,
        TEMPORAL_TASK_QUEUE: `traces-${randomUUID()}`,
        PORT: String(port),
        PUBLIC_BASE_URL: baseUrl,
        ACCESS_TOKEN_PRIVATE_KEY: privateKeyPem,
        WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
        WRITE_RATE_LIMIT: '1000000',
        // The standard variables, as npm run cluster sets them.
        OTEL_TRACES_EXPORTER: 'zipkin',
        OTEL_EXPORTER_ZIPKIN_ENDPOINT: zipkin.spansEndpoint,
        OTEL_BSP_SCHEDULE_DELAY: '200',
      };
      for (const file of ['worker/main.ts', 'server/main.ts']) {
        const child = spawn(process.execPath, ['--import', 'tsx', join(root, file)], {
          cwd: root,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        child.stdout!.on('data', (c: Buffer) => logs.push(c.toString()));
        child.stderr!.on('data', (c: Buffer) => logs.push(c.toString()));
        children.push(child);
      }
      const ready = () =>
        fetch(`${baseUrl}/ready`).then(
          (r) => r.ok,
          () => false,
        );
      await until('the API to be ready', ready, { timeoutMs: 120_000, intervalMs: 500 }).catch((err: Error) => {
        throw new Error(`${err.message}:\n${logs.join('').slice(-3000)}`);
      });
    }, 900_000);

    afterAll(async () => {
      await Promise.all(children.map((c) => stopProcess(c)));
      await receiver?.stop();
      await zipkin?.stop();
    });

    const token = (orgId: string, roles: Role[], userId = `user-${randomUUID()}`) =>
      tokens.sign({ userId, orgId, roles, kycCompleted: true });

    it('has the API request, the workflow, an activity and the POST in one trace; traceparent only where asked', async () => {
      const api = http(baseUrl);
      const org = randomUUID();
      const staff = await token(org, ['staff', 'admin']);
      const investorId = `user-${randomUUID()}`;
      const investor = await token(org, ['investor'], investorId);
      const pg = new PgClient({ connectionString: databaseUrl });
      await pg.connect();
      await pg.query(`insert into kyc_verifications (org_id, user_id, status) values ($1, $2, 'approved')`, [
        org,
        investorId,
      ]);
      await pg.end();

      // Two endpoints for subscription.created: one asks for traceparent, the other does not.
      const hooks = { traced: `traced-${randomUUID()}`, plain: `plain-${randomUUID()}` };
      const ids: Record<string, string> = {};
      for (const [kind, hook] of Object.entries(hooks)) {
        const res = await api.post('/notifications/webhook-endpoints', staff, {
          url: receiver.url(hook),
          eventTypes: ['subscription.created'],
          ...(kind === 'traced' && { sendTraceparent: true }),
        });
        expect(res.status).toBe(201);
        expect(res.body.data.send_traceparent).toBe(kind === 'traced');
        ids[kind] = res.body.data.id;
        await receiver.plan(hook, { secret: res.body.data.signing_secret, defaultStatus: 200 });
      }

      const offering = await createOffering(api, staff, { securityClass: { pricePerUnit: '100.00' } });
      // The subscription command.
      const created = await createSubscription(api, investor, offering);
      expect(created.status).toBe(201);

      const [traced] = await receiver.waitFor(hooks.traced, 1, 60_000);
      const [plain] = await receiver.waitFor(hooks.plain, 1, 60_000);
      expect(traced!.verified).toBe(true); // traceparent is not part of the signed content
      expect(plain!.verified).toBe(true);
      expect(plain!.headers.traceparent).toBeUndefined();
      const header = traced!.headers.traceparent;
      expect(header).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      const traceId = header!.split('-')[1]!;

      // Zipkin's API: the trace, once every part of it has been exported. Zipkin keeps span and
      // service names in lower case, so names are compared in lower case.
      const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
      const wanted = {
        request: (s: string, n: string) =>
          s === 'tranche-api' && same(n, 'POST /issuance/offerings/:offering_id/subscriptions'),
        // The create command is an update-with-start.
        client: (s: string, n: string) => s === 'tranche-api' && same(n, 'UpdateWithStartWorkflow:created'),
        // Spans made inside the workflow (exported through the worker's sink). Its RunWorkflow span
        // ends only when the workflow does, and a subscription's waits for its investor.
        workflow: (s: string, n: string) =>
          s === 'tranche-worker' && /^(RunWorkflow|HandleUpdate|StartActivity):/i.test(n),
        activity: (s: string, n: string) => s === 'tranche-worker' && same(n, 'RunActivity:recordTransition'),
        post: (s: string, n: string) => s === 'tranche-worker' && same(n, 'webhook POST'),
      };
      const readTrace = async (id: string): Promise<ZipkinSpan[]> => {
        const res = await fetch(`${zipkin!.url}/api/v2/trace/${id}`);
        return res.ok ? ((await res.json()) as ZipkinSpan[]) : []; // 404 until its first span is in
      };
      const nameOf = (sp: ZipkinSpan) => `${sp.localEndpoint?.serviceName ?? '?'} ${sp.name ?? ''}`;
      let names: string[] = [];
      let found: ZipkinSpan[] = [];
      const complete = async () => {
        found = await readTrace(traceId);
        names = found.map(nameOf);
        return Object.values(wanted).every((match) =>
          names.some((n) => match(n.slice(0, n.indexOf(' ')), n.slice(n.indexOf(' ') + 1))),
        );
      };
      // Incomplete in time: the expectation below names the missing parts.
      await until('every part of the trace', complete, { timeoutMs: 60_000, intervalMs: 500 }).catch(() => undefined);
      const missing = Object.entries(wanted)
        .filter(([, match]) => !names.some((n) => match(n.slice(0, n.indexOf(' ')), n.slice(n.indexOf(' ') + 1))))
        .map(([part]) => part);
      if (missing.length || process.env.TRACES_TEST_PRINT) console.error(`the trace has:\n  ${names.join('\n  ')}`);
      expect(missing).toEqual([]);
      // Each POST is a child of the activity that published its event.
      const spans = new Map(found.map((sp) => [sp.id, sp]));
      const posts = found.filter((sp) => same(sp.name ?? '', 'webhook POST'));
      expect(posts).toHaveLength(2);
      for (const post of posts) expect(spans.get(post.parentId ?? '')?.name).toBe('runactivity:recordtransition');
      // PostgreSQL is in it too, and the API's log lines name the trace.
      expect(names.some((n) => n.startsWith('tranche-api pg.query'))).toBe(true);
      expect(logs.join('')).toMatch(/"trace_id":"[0-9a-f]{32}"/);

      // The test operation publishes in the API by group commit: its POST joins the ping request's trace.
      const ping = await api.post(`/notifications/webhook-endpoints/${ids.traced}/test`, staff);
      expect(ping.status).toBe(202);
      const [, pinged] = await receiver.waitFor(hooks.traced, 2, 30_000);
      const pingTrace = pinged!.headers.traceparent!.split('-')[1]!;
      const pingNames = await until(
        "the ping's webhook POST in its trace",
        async () => (await readTrace(pingTrace)).map(nameOf),
        (names) => names.includes('tranche-worker webhook post'),
        { timeoutMs: 30_000, intervalMs: 500 },
      ).catch(async () => (await readTrace(pingTrace)).map(nameOf));
      expect(pingNames).toEqual(
        expect.arrayContaining([
          'tranche-api post /notifications/webhook-endpoints/:id/test',
          'tranche-worker webhook post',
        ]),
      );
    }, 180_000);
  });
});

/** A span as Zipkin's API v2 returns it (GET /api/v2/trace/<id>), the fields read here. */
interface ZipkinSpan {
  traceId: string;
  id: string;
  parentId?: string;
  name?: string;
  localEndpoint?: { serviceName?: string };
}
