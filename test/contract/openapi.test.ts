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
    // Fractions up to 6 decimals (docs/decisions.md, Trust): a number, not an integer.
    expect(body.properties.unitsSubscribed).toMatchObject({ type: 'number', exclusiveMinimum: 0 });
    expect(create.parameters).toEqual([expect.objectContaining({ name: 'offering_id', in: 'path', required: true, schema: expect.objectContaining({ format: 'uuid' }) })]);
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '401', '403', '404', '409', '413', '422', '429']));
    expect(create.responses['422'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
    // Set A has reconciliations; Set B's issue-shares is not served, so not documented.
    expect(doc.paths['/issuance/reconciliations'].post).toBeDefined();
    expect(doc.paths['/issuance/subscriptions/{subscription_id}/issue-shares']).toBeUndefined();
    const list = doc.paths['/issuance/subscriptions'].get.parameters.map((p: { name: string }) => p.name);
    expect(list).toEqual(['status', 'offering_id', 'limit', 'cursor']);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

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
