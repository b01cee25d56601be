import type { TestService } from '../support/service';
import type { LifecycleWorld } from '../support/subscriptions';
import { CANCEL, key, path, startCommandWorld, SUCCESS, withKey } from './support/idempotency';

/** Idempotency-Key on payment sessions: the same session for the same key and body, in each set. */
describe('Idempotency-Key on commands, Set A', () => {
  let svc: TestService;
  let w: LifecycleWorld;
  beforeAll(async () => {
    ({ svc, w } = await startCommandWorld('A'));
  }, 120_000);
  afterAll(() => svc?.stop());

  it('replays a setup session (Set A) with the same session_id, and refuses the key with another body', async () => {
    const s = await w.signed();
    const k = key();
    const body = { paymentMethod: 'card', successUrl: SUCCESS, cancelUrl: CANCEL };
    const open = (b: unknown) => w.api.post(path(s.id, 'create-setup-session'), w.investor.token, b, withKey(k));
    const first = await open(body);
    const again = await open({ cancelUrl: CANCEL, successUrl: SUCCESS, paymentMethod: 'card' });
    expect(first.status).toBe(200);
    expect(first.body.data.session_id).toEqual(expect.any(String));
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.session_id).toBe(first.body.data.session_id);
    const other = await open({ ...body, paymentMethod: 'us_bank_account' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Without a key the investor opens a new session: the key, not the state, made the replay.
    const fresh = await w.api.post(path(s.id, 'create-setup-session'), w.investor.token, body);
    expect(fresh.status).toBe(200);
    expect(fresh.body.data.session_id).not.toBe(first.body.data.session_id);
  });
});

describe('Idempotency-Key on commands, Set B', () => {
  let svc: TestService;
  let w: LifecycleWorld;
  beforeAll(async () => {
    ({ svc, w } = await startCommandWorld('B'));
  }, 120_000);
  afterAll(() => svc?.stop());

  it('replays a checkout session with the same session_id, and refuses the key with another body', async () => {
    const s = await w.signed();
    const k = key();
    const url = `/issuance/subscriptions/${s.id}/create-checkout-session`;
    const body = { paymentMethod: 'card', successUrl: SUCCESS, cancelUrl: CANCEL };
    const first = await w.api.post(url, w.investor.token, body, withKey(k));
    const again = await w.api.post(url, w.investor.token, body, withKey(k));
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.session_id).toBe(first.body.data.session_id);
    expect(again.body).toEqual(first.body);
    const other = await w.api.post(
      url,
      w.investor.token,
      { ...body, successUrl: 'https://investor.example/elsewhere' },
      withKey(k),
    );
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});
