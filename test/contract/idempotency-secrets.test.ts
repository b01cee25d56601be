import { randomUUID } from 'node:crypto';
import type { Role } from '../../domain/principal';
import { actor } from '../support/fixtures';
import type { TestService } from '../support/service';
import type { LifecycleWorld } from '../support/subscriptions';
import { key, startCommandWorld, withKey } from './support/idempotency';

/** Idempotency-Key on endpoint commands: a replayed signing secret, stored sealed, shown only to the caller with the same roles. */
describe('Idempotency-Key on commands, Set A', () => {
  let svc: TestService;
  let w: LifecycleWorld;
  beforeAll(async () => {
    ({ svc, w } = await startCommandWorld('A'));
  }, 120_000);
  afterAll(() => svc?.stop());

  it('replays endpoint create, rotate and test with the same signing secret, stored sealed', async () => {
    const base = '/notifications/webhook-endpoints';
    const k = key();
    const body = { url: 'https://hooks.invalid/tranche', eventTypes: ['subscription.created'] };
    const first = await w.api.post(base, w.staff.token, body, withKey(k));
    const again = await w.api.post(base, w.staff.token, body, withKey(k));
    expect(first.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const list = await w.api.get(`${base}?limit=100`, w.staff.token);
    expect(list.body.data.items.filter((e: { id: string }) => e.id === first.body.data.id)).toHaveLength(1);

    const rk = key();
    const rotate = () =>
      w.api.post(`${base}/${first.body.data.id}/rotate-secret`, w.staff.token, undefined, withKey(rk));
    const [r1, r2] = [await rotate(), await rotate()];
    expect(r1.body.data.signing_secret).not.toBe(first.body.data.signing_secret);
    expect(r2.body.data.signing_secret).toBe(r1.body.data.signing_secret);
    const rows: { body_sealed: string }[] = await svc.orm.em
      .getConnection()
      .execute('select body_sealed from idempotency_keys where body_sealed is not null');
    expect(rows.some((r) => r.body_sealed.includes(r1.body.data.signing_secret))).toBe(false);

    const tk = key();
    const ping = () => w.api.post(`${base}/${first.body.data.id}/test`, w.staff.token, undefined, withKey(tk));
    const [t1, t2] = [await ping(), await ping()];
    expect(t1.status).toBe(202);
    expect(t2.body.data.event_id).toBe(t1.body.data.event_id);
  });

  it('checks the caller and its role before any replay, and replays a secret only to the same roles', async () => {
    const userId = `admin-${randomUUID()}`;
    const as = (roles: Role[]) => actor(svc, w.org, roles, { userId });
    const [admin, demoted, widened] = [await as(['admin']), await as(['staff']), await as(['admin', 'staff'])];
    const k = key();
    const issue = (token: string) => w.api.post('/identity/api-keys', token, { name: 'backend' }, withKey(k));
    const first = await issue(admin.token);
    expect(first.status).toBe(201);
    expect(first.headers.get('cache-control')).toBe('no-store');
    // The same user without the admin role: the role check answers, not the kept answer.
    const lost = await issue(demoted.token);
    expect([lost.status, lost.body.error?.code]).toEqual([403, 'ROLE_REQUIRED']);
    expect(JSON.stringify(lost.body)).not.toContain(first.body.data.key);
    // Still an admin, with another role besides: the answer that shows the key is not replayed.
    const other = await issue(widened.token);
    expect([other.status, other.body.error?.code]).toEqual([409, 'IDEMPOTENCY_KEY_ROLES_CHANGED']);
    expect(JSON.stringify(other.body)).not.toContain(first.body.data.key);
    const again = await issue(admin.token);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const keys = await w.api.get('/identity/api-keys', admin.token);
    expect(keys.body.data.filter((x: { created_by: string }) => x.created_by === userId)).toHaveLength(1);

    // Webhook secrets alike; an answer without a secret replays to the caller whatever roles it gained.
    const base = '/notifications/webhook-endpoints';
    const staff = await actor(svc, w.org, ['staff'], { userId: `staff-${randomUUID()}` });
    const staffAndAdmin = await actor(svc, w.org, ['staff', 'admin'], { userId: staff.userId });
    const rk = key();
    const register = (token: string) =>
      w.api.post(base, token, { url: 'https://hooks.invalid/roles', eventTypes: ['*'] }, withKey(rk));
    const registered = await register(staff.token);
    expect(registered.status).toBe(201);
    const refused = await register(staffAndAdmin.token);
    expect([refused.status, refused.body.error?.code]).toEqual([409, 'IDEMPOTENCY_KEY_ROLES_CHANGED']);
    expect(JSON.stringify(refused.body)).not.toContain(registered.body.data.signing_secret);
    expect((await register(staff.token)).body).toEqual(registered.body);
    const tk = key();
    const ping = (token: string) =>
      w.api.post(`${base}/${registered.body.data.id}/test`, token, undefined, withKey(tk));
    const pinged = await ping(staff.token);
    expect(pinged.status).toBe(202);
    const replayed = await ping(staffAndAdmin.token);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(pinged.body);
  });
});
