import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import { AccessTokens } from '../../identity/access-tokens';
import type { Role } from '../../domain/principal';
import { loadTracingConfig } from '../../lib/runtime/config';
import { tracingWanted } from '../../lib/runtime/tracing';
import { freePort } from '../../scripts/lib/free-port';
import { stopProcess } from '../../scripts/lib/temporal-dev-server';
import { startZipkin, type RunningZipkin } from '../../scripts/lib/zipkin';
import { http } from '../support/http';
import { actor, newOrg } from '../support/fixtures';
import { freshDatabase, startService, type TestService } from '../support/service';
import { PATHS, registerHook } from '../webhooks/support/hooks';
import { publishEvents } from '../../webhooks';
import { Receiver } from '../webhooks/support/receiver';
import { until } from '../support/wait';
import { createOffering, createSubscription } from '../support/fixtures';
import { toolPath } from '../support/tools';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);

/** Traces: off unless OTEL_* ask for them; on, one trace from the API request to the webhook POST. */
describe('traces', () => {
  describe('off when the OTEL_* variables are unset', () => {
    it('wants tracing only when an endpoint or an exporter is named, and never with none or the SDK disabled', () => {
      const wanted = (env: Record<string, string>) => tracingWanted(loadTracingConfig(env));
      expect(wanted({})).toBe(false);
      expect(wanted({ OTEL_SERVICE_NAME: 'x' })).toBe(false);
      expect(wanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
      expect(wanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
      expect(wanted({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
      expect(wanted({ OTEL_TRACES_EXPORTER: 'zipkin' })).toBe(true);
      expect(
        wanted({ OTEL_TRACES_EXPORTER: 'zipkin', OTEL_EXPORTER_ZIPKIN_ENDPOINT: 'http://127.0.0.1:9411/api/v2/spans' }),
      ).toBe(true);
      expect(wanted({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
      expect(wanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(
        false,
      );
      expect(wanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
      // A Zipkin endpoint selects no exporter (OTEL_TRACES_EXPORTER does): refused rather than silently off.
      expect(() => wanted({ OTEL_EXPORTER_ZIPKIN_ENDPOINT: 'http://127.0.0.1:9411/api/v2/spans' })).toThrow(
        /OTEL_EXPORTER_ZIPKIN_ENDPOINT: set OTEL_TRACES_EXPORTER=zipkin/,
      );
      expect(() => wanted({ OTEL_TRACES_EXPORTER: 'jaeger' })).toThrow(/OTEL_TRACES_EXPORTER/);
      // Empty counts as unset, as the OpenTelemetry spec says (compose passes `${OTEL_TRACES_EXPORTER:-}` and the like).
      const blank = {
        OTEL_TRACES_EXPORTER: '',
        OTEL_EXPORTER_OTLP_ENDPOINT: '',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
        OTEL_EXPORTER_ZIPKIN_ENDPOINT: '',
        OTEL_SERVICE_NAME: '',
        OTEL_SDK_DISABLED: '',
      };
      expect(wanted(blank)).toBe(false);
      expect(wanted({ ...blank, OTEL_TRACES_EXPORTER: 'zipkin' })).toBe(true);
    });

    // In a process of its own, as the API and worker start: their first import is the tracing start.
    const probe = async (env: Record<string, string>) => {
      const script = `
        require('./server/tracing-preload');
        const { tracingOn } = require('./lib/runtime/tracing');
        const loaded = Object.keys(require.cache).filter((k) => /@opentelemetry[\\\\/](sdk-trace|instrumentation|exporter)/.test(k));
        const { trace } = require('@opentelemetry/api');
        const { logger } = require('./lib/runtime/logger');
        logger.info({ where: 'outside' }, 'probe');
        trace.getTracer('probe').startActiveSpan('probe', (span) => { logger.info({ where: 'inside' }, 'probe'); span.end(); });
        console.log(JSON.stringify({ on: tracingOn(), loaded: loaded.length, provider: trace.getTracerProvider().constructor.name }));`;
      const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
      const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', script], {
        cwd: root,
        env: { ...clean, ...env },
      });
      const lines = stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const logged = (where: string) => lines.find((l) => l.where === where)!;
      return {
        ...(lines.find((l) => 'on' in l) as { on: boolean; loaded: number; provider: string }),
        outside: logged('outside'),
        inside: logged('inside'),
      };
    };

    it('starts no SDK and loads none of its modules', async () => {
      const off = await probe({});
      expect(off).toMatchObject({ on: false, loaded: 0, provider: 'ProxyTracerProvider' });
      expect(off.inside).not.toHaveProperty('trace_id');
      // The same probe sees the SDK when the variables ask for it, and log lines in a span name it.
      const on = await probe({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
      expect(on.on).toBe(true);
      expect(on.loaded).toBeGreaterThan(0);
      expect(on.outside).not.toHaveProperty('trace_id');
      expect(on.inside).toMatchObject({
        trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
        span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      });
    }, 60_000);
  });

  describe('trusting nobody by default (docs/decisions/0262-traces-trust-nobody.md)', () => {
    // A traced process of its own: a plain http server after the tracing start, one request to it
    // with a caller's traceparent, baggage and a query string; the handler reports its span.
    const serve = async (env: Record<string, string>) => {
      const script = `
        require('./server/tracing-preload');
        const { trace, propagation, context } = require('@opentelemetry/api');
        const http = require('node:http');
        const server = http.createServer((req, res) => {
          const span = trace.getActiveSpan();
          res.end(JSON.stringify({ traceId: span.spanContext().traceId, attributes: span.attributes, links: span.links, headers: req.headers }));
        });
        server.listen(0, '127.0.0.1', async () => {
          const res = await fetch('http://127.0.0.1:' + server.address().port + '/sandbox/checkout/cs_secret_session/pay?code=secret-code', {
            headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00', baggage: 'user=alice' },
          });
          const carrier = {};
          propagation.inject(propagation.setBaggage(context.active(), propagation.createBaggage({ k: { value: 'v' } })), carrier);
          console.log(JSON.stringify({ span: JSON.parse(await res.text()), injected: Object.keys(carrier) }));
          server.close();
        });`;
      const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
      const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', script], {
        cwd: root,
        env: { ...clean, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', ...env },
      });
      const line = stdout
        .trim()
        .split('\n')
        .find((l) => l.includes('"injected"'))!;
      return JSON.parse(line) as {
        span: {
          traceId: string;
          attributes: Record<string, unknown>;
          links: unknown[];
          headers: Record<string, string>;
        };
        injected: string[];
      };
    };

    it("starts a trace of its own for an untrusted caller, links the caller's, keeps no query or capability, forwards no baggage", async () => {
      const { span, injected } = await serve({});
      expect(span.traceId).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736'); // a -00 could not un-sample it
      expect(span.links).toHaveLength(1);
      expect(span.attributes['trace.caller_traceparent']).toBe(
        '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00',
      );
      const text = JSON.stringify(span.attributes);
      expect(text).not.toMatch(/secret-code|cs_secret_session|\?/);
      expect(span.attributes['http.target']).toBe('/sandbox/checkout/:session_id/pay');
      expect(span.headers.baggage).toBeUndefined();
      expect(injected).not.toContain('baggage'); // no baggage header on any outgoing request
    }, 60_000);

    it('continues the trace of a caller in TRACE_TRUSTED_CALLERS', async () => {
      const { span } = await serve({ TRACE_TRUSTED_CALLERS: '127.0.0.0/8' });
      expect(span.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
      // Its -00 is honoured: the span is not recorded (no attributes, no links).
      expect(span.attributes).toBeUndefined();
    }, 60_000);
  });

  describe('send_traceparent with tracing off in the worker', () => {
    let svc: TestService;
    let receiver: Receiver;
    beforeAll(async () => {
      [svc, receiver] = await Promise.all([
        startService({ set: 'A', env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } }),
        Receiver.start(),
      ]);
    });
    afterAll(async () => {
      await svc?.stop();
      await receiver?.stop();
    });

    it("passes on the event's stored traceparent (a publisher that traced), to endpoints that asked only", async () => {
      const staff = await actor(svc, newOrg(), ['staff']);
      const hooks = { asked: `asked-${randomUUID()}`, plain: `plain-${randomUUID()}` };
      const asked = await registerHook(svc, receiver, staff, hooks.asked, ['subscription.created']);
      await registerHook(svc, receiver, staff, hooks.plain, ['subscription.created']);
      const on = await http(svc.baseUrl).patch(`${PATHS.A.endpoints}/${asked.id}`, staff.token, {
        sendTraceparent: true,
      });
      expect(on.body.data.send_traceparent).toBe(true);

      const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
      const event = {
        id: randomUUID(),
        type: 'subscription.created',
        source: 'service.issuance',
        orgId: staff.orgId,
        occurredAt: new Date().toISOString(),
        data: { id: randomUUID() },
      };
      // As a traced publisher leaves it: the traceparent stored with the event, in the publishing transaction.
      await svc.orm.em
        .getConnection()
        .getKnex()
        .transaction(async (trx) => {
          await publishEvents(trx, [event], { set: 'A' });
          await trx('events').where({ id: event.id }).update({ traceparent });
        });
      const [got] = await receiver.waitFor(hooks.asked, 1, 30_000);
      const [plain] = await receiver.waitFor(hooks.plain, 1, 30_000);
      expect(got!.verified).toBe(true);
      expect(got!.headers.traceparent).toBe(traceparent);
      expect(plain!.headers.traceparent).toBeUndefined();
    }, 60_000);
  });

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
