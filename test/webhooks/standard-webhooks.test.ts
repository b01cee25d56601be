import { Webhook } from 'standardwebhooks';
import { secretBoxFrom } from '../../webhooks/secrets/secret-box';
import { endpointKeys, signatureOf, signedRequest } from '../../webhooks/secrets/signing';
import type { Actor } from '../support/fixtures';
import { http } from '../support/http';
import type { TestService } from '../support/service';
import { PATHS, registerHook } from './support/hooks';
import type { Receiver, ReceivedDelivery } from './support/receiver';
import { startWebhookStack, stopWebhookStack } from './support/stack';

type EndpointSecrets = {
  endpoint_id: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
};

/** Verifies with the maintained Standard Webhooks library; answers what it parsed, or throws. */
const standardVerify = (secret: string, d: ReceivedDelivery) => new Webhook(secret).verify(d.body, d.headers);

describe('Standard Webhooks headers beside the spec’s', () => {
  let svc: TestService;
  let receiver: Receiver;
  let staff: Actor;
  let api: ReturnType<typeof http>;
  const base = PATHS.A.endpoints;

  beforeAll(async () => {
    ({ svc, receiver, api, staff } = await startWebhookStack('A'));
  });
  afterAll(() => stopWebhookStack({ svc, receiver }));

  const ping = async (endpointId: string) => {
    const res = await api.post(`${base}/${endpointId}/test`, staff.token);
    expect(res.status).toBe(202);
    return res.body.data as { event_id: string; delivery_id: string };
  };

  it('signs every delivery both ways: §6.4 with the secret string, Standard Webhooks with its decoded bytes', async () => {
    const hook = await registerHook(svc, receiver, staff, 'std-both', ['*']);
    const sent = await ping(hook.id);
    const [got] = await receiver.waitFor('std-both', 1);

    expect(got!.verified).toBe(true); // §6.4, checked in the receiver by @octokit/webhooks-methods
    expect(got!.headers['webhook-id']).toBe(sent.delivery_id);
    expect(Math.abs(Number(got!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
    expect(got!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(standardVerify(hook.secret, got!)).toMatchObject({
      event_id: sent.event_id,
      event_type: 'test.ping',
      version: '1',
    });
    // The §6.3 headers are all still there, unchanged.
    expect(got!.headers).toMatchObject({
      'x-service-event-id': sent.event_id,
      'x-service-delivery-id': sent.delivery_id,
      'user-agent': 'Service-Webhooks/1.0',
    });
  });

  it('is refused by the library when the body, the id or the timestamp was changed', async () => {
    const hook = await registerHook(svc, receiver, staff, 'std-tamper', ['*']);
    await ping(hook.id);
    const [got] = await receiver.waitFor('std-tamper', 1);
    const tampered = (patch: Partial<ReceivedDelivery>) => () => standardVerify(hook.secret, { ...got!, ...patch });
    expect(tampered({ body: got!.body.replace('"version":"1"', '"version":"2"') })).toThrow('No matching signature');
    expect(tampered({ headers: { ...got!.headers, 'webhook-id': 'msg_other' } })).toThrow('No matching signature');
    const earlier = String(Number(got!.headers['webhook-timestamp']) - 60);
    expect(tampered({ headers: { ...got!.headers, 'webhook-timestamp': earlier } })).toThrow('No matching signature');
    const stale = String(Math.floor(Date.now() / 1000) - 600);
    expect(tampered({ headers: { ...got!.headers, 'webhook-timestamp': stale } })).toThrow('too old');
  });

  it('after rotate-secret signs X-Service-Signature with the new secret only and webhook-signature with both', async () => {
    const hook = await registerHook(svc, receiver, staff, 'std-rotate', ['*']);
    const rotated = await api.post(`${base}/${hook.id}/rotate-secret`, staff.token);
    expect(rotated.status).toBe(200);
    const fresh: string = rotated.body.data.signing_secret;
    const overlapEnds = new Date(rotated.body.data.previous_secret_expires_at).getTime();
    expect(Math.abs(overlapEnds - (Date.now() + 24 * 3600_000))).toBeLessThan(120_000); // default 24 h
    await receiver.plan('std-rotate', { secret: fresh });

    await ping(hook.id);
    const [got] = await receiver.waitFor('std-rotate', 1);
    expect(got!.verified).toBe(true); // §6.4 under the new secret
    expect(got!.headers['x-service-signature']).not.toBe(signatureOf(hook.secret, got!.body));
    expect(got!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(standardVerify(fresh, got!)).toMatchObject({ event_type: 'test.ping' });
    expect(standardVerify(hook.secret, got!)).toMatchObject({ event_type: 'test.ping' }); // a consumer not rolled yet
  });

  it('a second rotation within the overlap keeps only the secret it replaced', async () => {
    const hook = await registerHook(svc, receiver, staff, 'std-twice', ['*']);
    const second = (await api.post(`${base}/${hook.id}/rotate-secret`, staff.token)).body.data.signing_secret as string;
    const third = (await api.post(`${base}/${hook.id}/rotate-secret`, staff.token)).body.data.signing_secret as string;
    await receiver.plan('std-twice', { secret: third });
    await ping(hook.id);
    const [got] = await receiver.waitFor('std-twice', 1);
    expect(standardVerify(third, got!)).toBeTruthy();
    expect(standardVerify(second, got!)).toBeTruthy();
    expect(() => standardVerify(hook.secret, got!)).toThrow('No matching signature');
  });

  it('drops the previous secret once the overlap has passed', async () => {
    const hook = await registerHook(svc, receiver, staff, 'std-expiry', ['*']);
    const fresh = (await api.post(`${base}/${hook.id}/rotate-secret`, staff.token)).body.data.signing_secret as string;
    const [row] = await svc.orm.em
      .getConnection()
      .execute<EndpointSecrets[]>(
        'select id as endpoint_id, secret_ciphertext, previous_secret_ciphertext, previous_secret_expires_at from webhook_endpoints where id = ?',
        [hook.id],
      );
    const box = secretBoxFrom(svc.config);
    const ids = { eventId: 'e', eventType: 'test.ping', deliveryId: 'msg_1', timestamp: new Date().toISOString() };
    const within = endpointKeys(box, row!, new Date());
    const after = endpointKeys(box, row!, new Date(new Date(row!.previous_secret_expires_at!).getTime() + 1));
    expect(within).toEqual({ current: fresh, previous: hook.secret });
    expect(after).toEqual({ current: fresh, previous: null });
    expect(signedRequest(after, '{}', ids).headers['webhook-signature']!.split(' ')).toHaveLength(1);
  });

  it('keys Standard Webhooks with the base64-decoded secret, so a base64url secret from before still verifies', () => {
    const legacy = 'whsec_' + Buffer.alloc(32, 0xfb).toString('base64url'); // has "-" and "_"
    const req = signedRequest(legacy, '{"a":1}', {
      eventId: 'e',
      eventType: 't',
      deliveryId: 'msg_2',
      timestamp: new Date().toISOString(),
    });
    const asStandard = 'whsec_' + Buffer.alloc(32, 0xfb).toString('base64');
    expect(new Webhook(asStandard).verify(req.body, req.headers)).toEqual({ a: 1 });
  });
});
