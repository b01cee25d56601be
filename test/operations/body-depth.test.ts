import { actor, newOrg } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';

/** `{"<field>": [[[ … ]]]}`, `levels` deep counting the outer object, written as text (JSON.stringify would recurse). */
const nested = (field: string, levels: number) => `{"${field}":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;

/** A deeply nested JSON body is a 400 in the one envelope, never a 500 from a recursive walk. */
describe('JSON body depth', () => {
  let svc: TestService;
  let api: ReturnType<typeof http>;
  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { DEV_IDP_ENABLED: 'true' } });
    api = http(svc.baseUrl);
  }, 120_000);
  afterAll(() => svc?.stop());

  const send = (path: string, raw: string, headers: Record<string, string> = {}) =>
    api.call('POST', path, { raw, headers: { 'content-type': 'application/json', ...headers } });
  const tooDeep = {
    success: false,
    error: { code: 'BODY_TOO_DEEP', message: expect.any(String), details: { max_depth: 32 } },
  };

  it('answers 400 BODY_TOO_DEEP for a body thousands of levels deep on a public route', async () => {
    const res = await send('/dev-idp/mint', nested('user_id', 20_000));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(tooDeep);
  });

  it('answers 400 BODY_TOO_DEEP for a deep body under an Idempotency-Key, before the key is hashed', async () => {
    const staff = await actor(svc, newOrg(), ['staff']);
    const res = await send('/issuance/offerings', nested('name', 20_000), {
      authorization: `Bearer ${staff.token}`,
      'idempotency-key': 'deep-body',
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(tooDeep);
  });

  it('lets 32 levels through to validation, and refuses 33', async () => {
    const at = await send('/dev-idp/mint', nested('user_id', 32));
    expect([at.status, at.body.error.code]).toEqual([422, 'VALIDATION_FAILED']);
    const over = await send('/dev-idp/mint', nested('user_id', 33));
    expect([over.status, over.body.error.code]).toEqual([400, 'BODY_TOO_DEEP']);
  });
});
