import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';

/** The document is read off the routers the app serves, and the docs page is served by the process itself. */
describe('the OpenAPI document and the docs page', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startService({ set: 'A' });
  }, 120_000);
  afterAll(() => svc?.stop());

  it('documents every route the service serves, with the schemas validate() checks', async () => {
    const res = await http(svc.baseUrl).get('/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    const create = doc.paths['/issuance/offerings/{offering_id}/subscriptions'].post;
    expect(create.security).toEqual([{ bearer: [] }]);
    const body = create.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(expect.arrayContaining(['securityClassId', 'unitsSubscribed']));
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.unitsSubscribed).toMatchObject({ type: 'number', exclusiveMinimum: 0 }); // fractions up to 6 decimals (Trust)
    expect(create.parameters).toEqual([
      expect.objectContaining({
        name: 'offering_id',
        in: 'path',
        required: true,
        schema: expect.objectContaining({ format: 'uuid' }),
      }),
      expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }),
    ]);
    expect(Object.keys(create.responses)).toEqual(
      expect.arrayContaining(['201', '401', '403', '404', '409', '413', '422', '429']),
    );
    expect(create.responses['422'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ErrorEnvelope',
    });
    // Set A has reconciliations; Set B's issue-shares is not served, so not documented.
    expect(doc.paths['/issuance/reconciliations'].post).toBeDefined();
    expect(doc.paths['/issuance/subscriptions/{subscription_id}/issue-shares']).toBeUndefined();
    const list = doc.paths['/issuance/subscriptions'].get.parameters.map((p: { name: string }) => p.name);
    expect(list).toEqual(['status', 'offering_id', 'limit', 'cursor']);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('types every success answer with its one status, and tags and summarises every operation', async () => {
    const doc = (await http(svc.baseUrl).get('/openapi.json')).body;
    expect(doc.jsonSchemaDialect).toBeUndefined();
    const data = (op: any, status: string) => op.responses[status].content['application/json'].schema.properties.data;
    const subs = doc.paths['/issuance/offerings/{offering_id}/subscriptions'].post;
    expect(Object.keys(subs.responses).filter((s) => s.startsWith('2'))).toEqual(['201']);
    expect(data(subs, '201')).toEqual({ $ref: '#/components/schemas/Subscription' });
    const cancel = doc.paths['/issuance/subscriptions/{subscription_id}'].delete;
    expect(Object.keys(cancel.responses).filter((s) => s.startsWith('2'))).toEqual(['204']);
    expect(doc.components.schemas.Subscription.required).toEqual(
      expect.arrayContaining(['id', 'investor_id', 'status', 'payment_status', 'total_amount']),
    );
    expect(data(doc.paths['/notifications/webhook-endpoints'].post, '201')).toEqual({
      $ref: '#/components/schemas/WebhookEndpointWithSecret',
    });
    expect(data(doc.paths['/identity/auth/exchange'].post, '200')).toEqual({
      $ref: '#/components/schemas/TokenResponse',
    });
    expect(doc.paths['/issuance/subscriptions/by-reference/{reference_code}'].get.summary).toMatch(
      /without reconciling/,
    );

    // The audit trail, as JSON pages and as a CSV export.
    expect(data(doc.paths['/audit/events'].get, '200')).toEqual({ $ref: '#/components/schemas/AuditEventList' });
    expect(Object.keys(doc.paths['/audit/events.csv'].get.responses['200'].content)).toEqual(['text/csv']);

    const ops = Object.entries(doc.paths).flatMap(([path, methods]: [string, any]) =>
      Object.entries(methods).map(([method, op]: [string, any]) => ({ path, method, op })),
    );
    for (const { path, method, op } of ops) {
      expect({ path, method, tags: op.tags, summary: typeof op.summary }).toEqual({
        path,
        method,
        tags: [expect.stringMatching(/^(identity|issuance|notifications|payments|audit|service)$/)],
        summary: 'string',
      });
      const successes = Object.entries(op.responses).filter(([s]) => s.startsWith('2') || s === '303');
      // One success status, but for an erasure, which answers 202 with the same body when it is not complete
      // (docs/decisions/0381-erasure-complete.md).
      const statuses = path === '/identity/users/{user_id}/erase' ? ['200', '202'] : [expect.any(String)];
      expect({ path, method, successes: successes.map(([s]) => s) }).toEqual({ path, method, successes: statuses });
      const [one, two] = successes as [string, any][];
      if (two) expect(two[1].content['application/json'].schema).toEqual(one![1].content['application/json'].schema);
      const [status, success] = successes[0] as [string, any];
      // Every JSON success answer, signed in or not, documents what its data holds.
      if (success.content?.['application/json']) {
        const data = success.content['application/json'].schema.properties.data;
        expect({
          path,
          method,
          typed: data?.$ref ?? (JSON.stringify(data ?? {}) === '{}' ? 'untyped' : 'inline'),
        }).toEqual({ path, method, typed: expect.stringMatching(/^(#\/components\/schemas\/|inline$)/) });
      } else if (status !== '204' && status !== '303') {
        // Only the document, its page, the key sets and the audit trail's CSV export answer outside the envelope.
        expect({ path, method }).toEqual({
          path: expect.stringMatching(
            /^\/(openapi\.json|docs(\/.*)?|identity\/\.well-known\/jwks\.json|dev-idp\/.+|(payments\/)?sandbox\/.+|audit\/events\.csv)$/,
          ),
          method,
        });
      }
      const key = (op.parameters ?? []).some((p: any) => p.in === 'header' && p.name === 'Idempotency-Key');
      expect({ path, method, key }).toEqual({ path, method, key: method === 'post' && Boolean(op.security) });
    }
    for (const tag of ['identity', 'issuance', 'notifications', 'payments'])
      expect(ops.some(({ op }) => op.tags[0] === tag)).toBe(true);
    // The console's HTML pages and the dev IdP's browser sign-in are not the JSON API.
    expect(Object.keys(doc.paths).filter((p) => /^\/console|^\/dev-idp\/(authorize|token)$/.test(p))).toEqual([]);
  });

  it('types the answers of the endpoint-health, recovery, events and console routes, with their real statuses', async () => {
    const doc = (await http(svc.baseUrl).get('/openapi.json')).body;
    const data = (op: any, status: string) => op.responses[status].content['application/json'].schema.properties.data;
    const twoxx = (op: any) => Object.keys(op.responses).filter((s) => s.startsWith('2'));
    const endpoints = Object.keys(doc.paths).find((p) => /webhook-endpoints\/\{id\}\/recoveries$/.test(p))!;
    const recovery = `${endpoints}/{recovery_id}`;
    expect(twoxx(doc.paths[endpoints].post)).toEqual(['202']);
    expect(data(doc.paths[endpoints].post, '202')).toEqual({ $ref: '#/components/schemas/WebhookRecovery' });
    expect(data(doc.paths[recovery].get, '200')).toEqual({ $ref: '#/components/schemas/WebhookRecovery' });
    // The endpoint's recoveries, a recovery's explicit end, and each attempt's request headers.
    expect(data(doc.paths[endpoints].get, '200')).toEqual({ $ref: '#/components/schemas/WebhookRecoveryList' });
    const start = doc.paths[endpoints].post.requestBody.content['application/json'].schema;
    expect([start.required, Object.keys(start.properties)]).toEqual([['since'], ['since', 'until', 'mode']]);
    expect(doc.components.schemas.WebhookAttempt.properties.request_headers).toMatchObject({
      anyOf: [{ type: 'object', additionalProperties: { type: 'string' } }, { type: 'null' }],
    });
    expect(twoxx(doc.paths[recovery].delete)).toEqual(['202']);
    expect(data(doc.paths[recovery].delete, '202')).toEqual({ $ref: '#/components/schemas/WebhookRecovery' });
    expect(doc.components.schemas.WebhookRecovery.properties.status.enum).toEqual([
      'running',
      'cancelling',
      'completed',
      'cancelled',
    ]);
    expect(data(doc.paths['/notifications/events'].get, '200')).toEqual({ $ref: '#/components/schemas/EventList' });
    expect(doc.components.schemas.EventEnvelope.required).toEqual([
      'event_id',
      'event_type',
      'source',
      'org_id',
      'version',
      'timestamp',
      'data',
    ]);
    const health = Object.keys(doc.paths).find((p) => p.endsWith('/{id}/health'))!;
    expect(data(doc.paths[health].get, '200')).toEqual({ $ref: '#/components/schemas/WebhookEndpointHealth' });
    expect(data(doc.paths['/issuance/review-queue'].get, '200')).toEqual({ $ref: '#/components/schemas/ReviewQueue' });
    // Subscriptions needing attention (docs/decisions/0366-subscriptions-needing-attention.md), staff only.
    expect(data(doc.paths['/issuance/attention'].get, '200')).toEqual({ $ref: '#/components/schemas/AttentionList' });
    expect(doc.paths['/issuance/attention'].get.responses['403']).toBeDefined();
    expect(data(doc.paths['/issuance/subscriptions/{subscription_id}/activity'].get, '200')).toEqual({
      $ref: '#/components/schemas/SubscriptionActivity',
    });
  });

  it('documents every event type of the set as a webhook, with the envelope, its data and the delivery headers', async () => {
    const api = http(svc.baseUrl);
    const doc = (await api.get('/openapi.json')).body;
    const staffToken = await svc.tokens.sign({
      userId: 'u',
      orgId: '00000000-0000-4000-8000-000000000009',
      roles: ['staff'],
      kycCompleted: false,
    });
    const served = (await api.get('/notifications/event-types', staffToken)).body.data.eventTypes as string[];
    // webhook.endpoint.disabled is documented whether or not the set lists it as subscribable.
    expect(Object.keys(doc.webhooks).sort()).toEqual([...new Set([...served, 'webhook.endpoint.disabled'])].sort());
    const approved = doc.webhooks['subscription.approved'].post;
    const body = approved.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['event_id', 'event_type', 'source', 'org_id', 'version', 'timestamp', 'data']);
    expect(body.properties.event_type).toEqual({ const: 'subscription.approved' });
    expect(body.properties.data).toEqual({ $ref: '#/components/schemas/SubscriptionEventData' });
    expect(doc.components.schemas.SubscriptionEventData.required).toEqual(
      expect.arrayContaining(['investor_id', 'sequence']),
    );
    expect(
      doc.webhooks['kyc.case.approved'].post.requestBody.content['application/json'].schema.properties.data,
    ).toEqual({ $ref: '#/components/schemas/KycCaseEventData' });
    const headers = approved.parameters.map((p: { name: string }) => p.name);
    expect(headers).toEqual(
      expect.arrayContaining([
        'X-Service-Signature',
        'X-Service-Event-Type',
        'X-Service-Event-Id',
        'X-Service-Delivery-Id',
        'X-Service-Timestamp',
        'User-Agent',
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]),
    );
    const disabled =
      doc.webhooks['webhook.endpoint.disabled'].post.requestBody.content['application/json'].schema.properties.data;
    expect(doc.components.schemas[disabled.$ref.split('/').pop()].required).toEqual([
      'endpoint_id',
      'reason',
      'disabled_at',
    ]);
  });

  it('opens the docs page in a browser with no warning, operations grouped by tag, each with its summary', async () => {
    const executablePath = process.env.CHROMIUM_PATH;
    if (!executablePath) throw new Error('CHROMIUM_PATH is not set: run the tests with scripts/test.sh');
    const profile = mkdtempSync(join(tmpdir(), 'tranche-docs-'));
    const args = [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ];
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args,
      timeout: 60_000,
      viewport: { width: 1280, height: 2400 },
    });
    try {
      const page = await context.newPage();
      await page.goto(`${svc.baseUrl}/docs`);
      await page.locator('.opblock-tag-section').first().waitFor({ timeout: 60_000 });
      const tags = await page.locator('.opblock-tag').allInnerTexts();
      for (const tag of ['identity', 'issuance', 'notifications', 'payments'])
        expect(tags.some((t) => t.split('\n')[0]!.trim() === tag)).toBe(true);
      expect(tags.some((t) => /^default/.test(t))).toBe(false);
      expect(await page.locator('.errors-wrapper').count()).toBe(0);
      const summaries = await page.locator('.opblock-summary-description').allInnerTexts();
      expect(summaries.length).toBeGreaterThan(40);
      expect(summaries.every((t) => t.trim().length > 0)).toBe(true);
      await page.getByText('Webhooks', { exact: true }).first().waitFor({ timeout: 10_000 });
      const shot = join(tmpdir(), 'tranche-docs.png');
      await page.screenshot({ path: shot });
      process.stdout.write(`docs page screenshot: ${shot}\n`);
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
  }, 120_000);

  it('serves the docs page and its assets from the service, not a CDN', async () => {
    const page = await fetch(`${svc.baseUrl}/docs`);
    const html = await page.text();
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(html).not.toMatch(/https?:\/\//);
    for (const asset of ['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/init.js']) {
      const res = await fetch(svc.baseUrl + asset);
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(50);
    }
    const other = await http(svc.baseUrl).get('/docs/package.json');
    expect(other.status).toBe(404);
    expect(other.body.success).toBe(false);
  });
});
