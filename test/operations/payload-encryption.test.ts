import { randomBytes, randomUUID } from 'node:crypto';
import { Client, WorkflowFailedError } from '@temporalio/client';
import { subscriptionWorkflowId } from '../../domain/subscription';
import { paymentNotified, SUBSCRIPTION_WORKFLOW, voidAgreement } from '../../domain/subscription-messages';
import { RETURN_URLS } from '../payments/payment-helpers';
import { until } from '../support/wait';
import { AesGcmPayloadCodec, ENCRYPTED_ENCODING } from '../../lib/runtime/payload-codec';
import { actor } from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld } from '../support/subscriptions';
import { cliHistory } from './support/temporal-history';

const newKey = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

/** The ids of the keys the payloads anywhere in a history were sealed under. */
function sealedUnder(history: unknown): Set<string> {
  const ids = new Set<string>();
  const walk = (node: unknown): void => {
    if (!node || typeof node !== 'object' || ArrayBuffer.isView(node)) return;
    const id = (node as { metadata?: Record<string, Uint8Array> }).metadata?.['encryption-key-id'];
    if (id) ids.add(Buffer.from(id).toString());
    for (const value of Object.values(node)) walk(value);
  };
  walk(history);
  return ids;
}

describe('workflow payloads are sealed before Temporal stores them (docs/decisions/0306)', () => {
  const operators = randomUUID();
  const k1 = newKey('k1');
  let svc: TestService | undefined;

  afterEach(async () => {
    await svc?.stop();
    svc = undefined;
  });

  it('keeps a signature and a refusal out of the history in clear; the codec server opens the payloads for an operator', async () => {
    svc = await startService({ set: 'A', env: { TEMPORAL_PAYLOAD_KEYS: k1, CODEC_SERVER_ORG_IDS: operators } });
    const world = await lifecycleWorld(svc);
    const signature = `Zephyrine Quillfeather ${randomBytes(4).toString('hex')}`;
    const s = await world.create();
    await world.post(s.id, 'request-signature', world.investor);
    const signed = await world.post(s.id, 'sign-agreement', world.investor, {
      signature,
      signedAt: '2026-11-21T10:00:00Z',
    });
    expect(signed.status).toBe(200);
    // A refusal from the workflow's update handler: its message is a failure in the history (0324).
    const session = await world.post(s.id, 'create-setup-session', world.investor, {
      paymentMethod: 'us_bank_account',
      successUrl: 'https://investor.example/done',
      cancelUrl: 'https://investor.example/cancel',
    });
    expect(session.status).toBe(200);
    const early = await world.post(s.id, 'finalize-setup', world.investor);
    expect([early.status, early.body.error.code]).toEqual([409, 'SETUP_INCOMPLETE']);
    const refusal = 'complete it first';
    expect(early.body.error.message).toContain(refusal);

    const workflowId = subscriptionWorkflowId(s.id);
    const sealed = await cliHistory(svc, workflowId);
    expect(sealed).toContain(Buffer.from(ENCRYPTED_ENCODING).toString('base64'));
    expect(sealed).toContain('SETUP_INCOMPLETE'); // the failure is there; its type is not personal
    expect(sealed).not.toContain(signature);
    expect(sealed).not.toContain(world.investor.userId);
    expect(sealed).not.toContain(refusal);

    const operator = await actor(svc, operators, ['admin']);
    const endpoint = `${svc.baseUrl}/console/codec`;
    const opened = await cliHistory(svc, workflowId, { endpoint, auth: `Bearer ${operator.token}` });
    expect(opened).toContain(world.investor.userId);
    // The signature itself is sealed under the investor's own key before the workflow sees it, so
    // not even the payload keys open it (docs/decisions/0313-erasure-by-crypto-shredding.md).
    expect(opened).toMatch(/pii:v1:/);
    expect(opened).not.toContain(signature);
    expect(opened).toContain(refusal);
  });

  it('refuses the codec server to anyone but the operators, and answers the Web UI’s origin only', async () => {
    svc = await startService({ set: 'A', env: { TEMPORAL_PAYLOAD_KEYS: k1, CODEC_SERVER_ORG_IDS: operators } });
    const api = http(svc.baseUrl);
    const sealed = await new AesGcmPayloadCodec([{ id: 'k1', key: Buffer.from(k1.slice(3), 'base64') }]).encode([
      { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"secret"') },
    ]);
    const body = {
      payloads: sealed.map((p) => ({
        metadata: Object.fromEntries(
          Object.entries(p.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
        ),
        data: Buffer.from(p.data!).toString('base64'),
      })),
    };
    const tenantAdmin = await actor(svc, randomUUID(), ['admin']);
    const operatorStaff = await actor(svc, operators, ['staff']);
    const operator = await actor(svc, operators, ['admin']);

    expect((await api.post('/console/codec/decode', undefined, body)).status).toBe(401);
    const refused = await api.post('/console/codec/decode', tenantAdmin.token, body);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('CODEC_FORBIDDEN');
    expect((await api.post('/console/codec/decode', operatorStaff.token, body)).status).toBe(403);

    const opened = await api.post('/console/codec/decode', operator.token, body);
    expect(opened.status).toBe(200);
    expect(Buffer.from(opened.body.payloads[0].data, 'base64').toString()).toBe('"secret"');
    // Protobuf's JSON leaves an empty list out: the CLI asks with `{}` and expects no payloads back.
    const none = await api.post('/console/codec/decode', operator.token, {});
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ payloads: [] });

    const uiOrigin = new URL(svc.config.TEMPORAL_UI_URL).origin;
    const preflight = await fetch(`${svc.baseUrl}/console/codec/decode`, {
      method: 'OPTIONS',
      headers: { origin: uiOrigin, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
    const elsewhere = await fetch(`${svc.baseUrl}/console/codec/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('reads histories sealed under an older key after a rotation, and seals new ones under the new key', async () => {
    svc = await startService({ set: 'A', env: { TEMPORAL_PAYLOAD_KEYS: k1 } });
    const world = await lifecycleWorld(svc);
    const before = await world.create();
    const taskQueue = svc.config.TEMPORAL_TASK_QUEUE;
    await svc.stop();

    const k2 = newKey('k2');
    svc = await startService({
      set: 'A',
      env: {
        TEMPORAL_PAYLOAD_KEYS: `${k2},${k1}`,
        TEMPORAL_TASK_QUEUE: taskQueue,
        DATABASE_URL: svc.config.DATABASE_URL,
      },
    });
    const rotated = await lifecycleWorld(svc);
    // The subscription made under k1 takes its next command from a worker that seals under k2.
    const investor = await actor(svc, world.org, ['investor'], { userId: world.investor.userId, kycCompleted: true });
    const moved = await http(svc.baseUrl).post(
      `/issuance/subscriptions/${before.id}/request-signature`,
      investor.token,
      {},
    );
    expect(moved.status).toBe(200);
    expect(moved.body.data.status).toBe('pending_signature');

    const history = await svc.temporal.workflow.getHandle(subscriptionWorkflowId(before.id)).fetchHistory();
    expect([...sealedUnder(history)].sort()).toEqual(['k1', 'k2']);
    expect((await rotated.create()).status).toBe('draft');
  });

  it('refuses a plaintext signal or update from a client without the codec; the subscription is unchanged and goes on', async () => {
    svc = await startService({ set: 'B', env: { TEMPORAL_PAYLOAD_KEYS: k1 } });
    const world = await lifecycleWorld(svc);
    const s = await world.signed();
    const checkout = await world.post(s.id, 'create-checkout-session', world.investor, {
      paymentMethod: 'card',
      ...RETURN_URLS,
    });
    expect(checkout.status).toBe(200);
    const reference = checkout.body.data.session_id as string;
    const status = async () => (await world.api.get(`/issuance/subscriptions/${s.id}`, world.investor.token)).body.data;
    const before = await status();
    expect(before.status).toBe('pending_payment');

    // Whoever reaches Temporal, without the payload keys: a plaintext "payment succeeded" and a plaintext void.
    const stranger = new Client({ connection: svc.temporal.connection, namespace: svc.config.TEMPORAL_NAMESPACE });
    const forged = stranger.workflow.getHandle(subscriptionWorkflowId(s.id));
    const forgery = {
      kind: 'succeeded',
      processorEventId: `evt-forged-${s.id}`,
      reference,
      amount: before.total_amount,
    };
    await forged.signal(paymentNotified, forgery as never);
    const voided = await forged
      .executeUpdate(voidAgreement, { args: [{ reason: 'forged', actorId: 'stranger' }] })
      .then(
        () => 'applied',
        (err: unknown) => err,
      );
    // The worker has taken the signal (its workflow task is done) and applied nothing.
    await until(
      'the forged signal handled',
      async () => {
        const events =
          (await svc!.temporal.workflow.getHandle(subscriptionWorkflowId(s.id)).fetchHistory()).events ?? [];
        const signalled = events.findIndex((e) => e.workflowExecutionSignaledEventAttributes);
        return signalled >= 0 && events.slice(signalled).some((e) => e.workflowTaskCompletedEventAttributes);
      },
      (handled) => handled,
    );
    const after = await status();
    expect([after.status, after.payment_status]).toEqual([before.status, before.payment_status]);
    // Refused before it was accepted: no update of that name in the history (the refusal itself is sealed: the
    // stranger's client cannot even read why).
    expect(voided).toBeInstanceOf(Error);
    const history = (await svc.temporal.workflow.getHandle(subscriptionWorkflowId(s.id)).fetchHistory()).events ?? [];
    const accepted = history.map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name);
    expect(accepted).not.toContain('voidAgreement');
    expect((await world.events(s.id)).map((e) => e.type)).toEqual(['subscription.created', 'subscription.signed']);

    // Nothing is stuck behind it: the same notification, sealed by a holder of the keys, is applied.
    await svc.temporal.workflow.getHandle(subscriptionWorkflowId(s.id)).signal(paymentNotified, {
      ...forgery,
      processorEventId: `evt-sealed-${s.id}`,
    } as never);
    expect(await until('in review', status, (v) => v.status === 'pending_review')).toMatchObject({
      status: 'pending_review',
    });

    // A workflow started with plaintext input fails at once rather than retrying its first task.
    const started = await stranger.workflow.start(SUBSCRIPTION_WORKFLOW, {
      workflowId: `stranger-${randomUUID()}`,
      taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
      args: [{ start: { id: randomUUID() } }],
    });
    const failed = await svc.temporal.workflow
      .getHandle(started.workflowId)
      .result()
      .catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(WorkflowFailedError);
    expect((failed as WorkflowFailedError).cause?.message).toBe('the workflow was started with an unsealed input');
  }, 120_000);

  it('refuses a payload it cannot open rather than passing it on', async () => {
    const ring = (entry: string) => [{ id: entry.split(':')[0]!, key: Buffer.from(entry.split(':')[1]!, 'base64') }];
    const [sealed] = await new AesGcmPayloadCodec(ring(k1)).encode([{ metadata: {}, data: Buffer.from('x') }]);
    await expect(new AesGcmPayloadCodec(ring(newKey('k2'))).decode([sealed!])).rejects.toThrow(/key "k1"/);
    const data = Buffer.from(sealed!.data!);
    data[20] = data[20]! ^ 0xff;
    const tampered = { ...sealed!, data };
    await expect(new AesGcmPayloadCodec(ring(k1)).decode([tampered])).rejects.toThrow();
    // A payload that is not sealed at all is refused too (a marker no converter reads), unless told otherwise.
    const plain = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{"kind":"succeeded"}') };
    const [refused] = await new AesGcmPayloadCodec(ring(k1)).decode([plain]);
    expect(Buffer.from(refused!.metadata!.encoding!).toString()).toBe('binary/unsealed-refused');
    expect(refused!.data).toHaveLength(0);
    expect(await new AesGcmPayloadCodec(ring(k1), { acceptUnsealed: true }).decode([plain])).toEqual([plain]);
  });
});
