import { createHash, randomBytes } from 'node:crypto';
import { actor, consoleToken } from '../support/fixtures';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';

/** The routes behind the console and its sign-in, over plain HTTP. */
describe('Console reads and sign-in over HTTP (Set A)', () => {
  let svc: TestService;
  let w: LifecycleWorld;
  const base = () => svc.baseUrl;
  const callback = () => `${svc.config.PUBLIC_BASE_URL}/console/auth/callback`;

  beforeAll(async () => {
    svc = await startService({ set: 'A', env: { DEV_IDP_ENABLED: 'true' } });
    w = await lifecycleWorld(svc);
  }, 120_000);
  afterAll(() => svc?.stop());

  /** The dev IdP's form, as a browser posts it; answers the code it redirects back with. */
  async function authorize(challenge: string, overrides: Record<string, string> = {}) {
    const form = new URLSearchParams({
      response_type: 'code',
      client_id: 'tranche-dev',
      redirect_uri: callback(),
      scope: 'openid',
      state: randomBytes(16).toString('hex'),
      nonce: randomBytes(16).toString('hex'),
      code_challenge: challenge,
      code_challenge_method: 'S256',
      user_id: 'reviewer',
      org_id: w.org,
      roles: 'staff',
      ...overrides,
    });
    return fetch(`${base()}/dev-idp/authorize`, {
      method: 'POST',
      body: form,
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
  }
  const token = (code: string, verifier: string) =>
    fetch(`${base()}/dev-idp/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: callback(),
        client_id: 'tranche-dev',
        code_verifier: verifier,
      }),
      signal: AbortSignal.timeout(30_000),
    });

  it('lists the review queue oldest first, for staff of the organisation only', async () => {
    const first = await w.inReviewByWire();
    const second = await w.inReviewByWire();
    const foreign = await (await lifecycleWorld(svc)).inReviewByWire();
    const res = await w.api.get('/issuance/review-queue', w.staff.token);
    expect(res.status).toBe(200);
    const ids = res.body.data.items.map((i: { subscription: { id: string } }) => i.subscription.id);
    expect(ids.indexOf(first.id)).toBeLessThan(ids.indexOf(second.id));
    expect(ids).not.toContain(foreign.id);
    expect(res.body.data.items[ids.indexOf(first.id)]).toMatchObject({
      investor_id: w.investor.userId,
      kyc_status: 'approved',
      accreditation_status: 'none',
      waiting_seconds: expect.any(Number),
    });
    expect((await w.api.get('/issuance/review-queue', w.investor.token)).body.error.code).toBe('ROLE_REQUIRED');
  });

  it('pages the review queue oldest first with a cursor, to its end', async () => {
    const world = await lifecycleWorld(svc);
    const made = [await world.inReviewByWire(), await world.inReviewByWire(), await world.inReviewByWire()];
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: { status: number; body: any } = await world.api.get(
        `/issuance/review-queue?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        world.staff.token,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.data.items.map((i: { subscription: { id: string } }) => i.subscription.id));
      cursor = res.body.data.next_cursor;
    } while (cursor && seen.length < 10);
    expect(seen).toEqual(made.map((s) => s.id));
    // The console pages with the same cursor: after the first two, only the third is shown.
    const head = await world.api.get('/issuance/review-queue?limit=2', world.staff.token);
    const later = await fetch(`${base()}/console/?cursor=${encodeURIComponent(head.body.data.next_cursor)}`, {
      headers: { cookie: `tranche_console=${await consoleToken(svc, world.staff)}` },
      signal: AbortSignal.timeout(30_000),
    });
    const text = await later.text();
    expect([
      later.status,
      text.includes(`queue-card-${made[2]!.id}`),
      text.includes(`queue-card-${made[0]!.id}`),
    ]).toEqual([200, true, false]);
    const bad = await world.api.get('/issuance/review-queue?cursor=garbage', world.staff.token);
    expect([bad.status, bad.body.error?.code]).toEqual([400, 'INVALID_CURSOR']);
  });

  it('answers 404 for another organisation’s subscription activity, endpoint health and reference code', async () => {
    const other = await lifecycleWorld(svc);
    const s = await other.inReviewByWire();
    const endpoint = await other.api.post('/notifications/webhook-endpoints', other.staff.token, {
      url: 'https://hooks.example.com/x',
      eventTypes: ['*'],
    });
    expect(endpoint.status).toBe(201);
    expect((await w.api.get(`/issuance/subscriptions/${s.id}/activity`, w.staff.token)).status).toBe(404);
    expect(
      (await w.api.get(`/notifications/webhook-endpoints/${endpoint.body.data.id}/health`, w.staff.token)).status,
    ).toBe(404);
    expect((await w.api.get(`/issuance/subscriptions/by-reference/${s.reference_code}`, w.staff.token)).status).toBe(
      404,
    );
    expect(
      (await other.api.get(`/issuance/subscriptions/by-reference/${s.reference_code}`, other.staff.token)).body.data.id,
    ).toBe(s.id);
  });

  it('takes a dev IdP code once, and only with its PKCE verifier', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const wrong = new URL((await authorize(challenge)).headers.get('location')!).searchParams.get('code')!;
    expect((await token(wrong, randomBytes(32).toString('base64url'))).status).toBe(400);
    expect((await token(wrong, verifier)).status).toBe(400); // spent by the failed try
    const code = new URL((await authorize(challenge)).headers.get('location')!).searchParams.get('code')!;
    const ok = await token(code, verifier);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { id_token: string }).id_token.split('.')).toHaveLength(3);
    expect((await token(code, verifier)).status).toBe(400);
  });

  it('redirects codes only to this service’s console', async () => {
    const res = await authorize('a'.repeat(43), { redirect_uri: 'https://evil.example/callback' });
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
  });

  it('refuses a callback whose state is not the one this browser started with', async () => {
    const start = await fetch(`${base()}/console/auth/start`, {
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    const cookie = start.headers.get('set-cookie')!.split(';')[0]!;
    const res = await fetch(`${base()}/console/auth/callback?code=x&state=forged`, {
      headers: { cookie },
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(res.status).toBe(401);
    expect(await res.text()).toContain('SIGN_IN_STATE_INVALID');
    expect(res.headers.get('set-cookie') ?? '').not.toContain('tranche_console=ey');
  });

  it('refuses a console command sent from another site, and changes nothing', async () => {
    const s = await w.inReviewByWire();
    const staff = await actor(svc, w.org, ['staff']);
    const res = await fetch(`${base()}/console/subscriptions/${s.id}/approve`, {
      method: 'POST',
      headers: {
        cookie: `tranche_console=${staff.token}`,
        origin: 'https://evil.example',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'from=queue',
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('CROSS_SITE_REQUEST');
    expect((await w.api.get(`/issuance/subscriptions/${s.id}`, w.staff.token)).body.data.status).toBe('pending_review');
  });
});
