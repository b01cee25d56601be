import { INFO_PROVIDED } from '../../domain/events';
import { actor } from '../support/fixtures';
import { inReview } from '../support/in-review';
import { startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';
import { registerHook } from '../webhooks/support/hooks';
import { Receiver } from '../webhooks/support/receiver';
import { until } from '../support/wait';

/**
 * An information request gets its answer (docs/decisions/0277-answering-an-information-request.md):
 * the investor answers with provide-info, the answer is kept beside the request, the request is
 * closed, staff may ask again, and `subscription.info_provided` reaches only endpoints naming it.
 */
describe.each(['A', 'B'] as const)('Set %s: answering an information request', (set) => {
  let svc: TestService;
  let w: LifecycleWorld;
  let receiver: Receiver;

  beforeAll(async () => {
    [svc, receiver] = await Promise.all([
      startService({ set, env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } }),
      Receiver.start(),
    ]);
    w = await lifecycleWorld(svc);
  });
  afterAll(async () => {
    await svc.stop();
    await receiver.stop();
  });

  const provide = (id: string, body: unknown, by = w.investor) => w.post(id, 'provide-info', by, body);
  const ask = (id: string, reason: string) => w.post(id, 'request-info', w.staff, { reason });

  it('refuses an answer with 409 NO_OPEN_INFO_REQUEST when nothing was asked', async () => {
    const s = await inReview(svc, w);
    const res = await provide(s.id, { message: 'unprompted' });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'NO_OPEN_INFO_REQUEST' });
    const draft = await w.create();
    expect((await provide(draft.id, { message: 'x' })).body.error.code).toBe('NO_OPEN_INFO_REQUEST');
  });

  it('records the answer beside the request, closes it, and keeps the history when staff ask again', async () => {
    const s = await inReview(svc, w);
    expect((await ask(s.id, 'Proof of address, please')).body.data).toMatchObject({
      info_requested: 'Proof of address, please',
      info_requests: [{ message: 'Proof of address, please', answer: null }],
    });
    const answered = await provide(s.id, { message: 'Utility bill attached', documentReferences: ['doc-123'] });
    expect(answered.status).toBe(200);
    expect(answered.body.data.status).toBe('pending_review');
    expect(answered.body.data.info_requested).toBeUndefined();
    expect(answered.body.data.info_requests).toEqual([
      {
        message: 'Proof of address, please',
        requested_at: expect.any(String),
        answer: {
          message: 'Utility bill attached',
          document_references: ['doc-123'],
          answered_at: expect.any(String),
        },
      },
    ]);
    // Answered once: a second answer has nothing to answer.
    expect((await provide(s.id, { message: 'again' })).body.error.code).toBe('NO_OPEN_INFO_REQUEST');

    await ask(s.id, 'And the source of funds');
    const second = await provide(s.id, { message: 'Savings' });
    expect(second.body.data.info_requests.map((x: any) => [x.message, x.answer?.message])).toEqual([
      ['Proof of address, please', 'Utility bill attached'],
      ['And the source of funds', 'Savings'],
    ]);
    expect(second.body.data.info_requests[1].answer.document_references).toEqual([]);
    // The projection (what lists and the console read) holds the same.
    const read = await w.api.get(`/issuance/subscriptions/${s.id}`, w.staff.token);
    expect(read.body.data.info_requests).toEqual(second.body.data.info_requests);

    const events = (await w.events(s.id)).filter((e) => e.type.startsWith('subscription.info_'));
    expect(events.map((e) => e.type)).toEqual([
      'subscription.info_requested',
      INFO_PROVIDED,
      'subscription.info_requested',
      INFO_PROVIDED,
    ]);
    // Stored sealed under the investor's key (docs/decisions/0313-erasure-by-crypto-shredding.md); the
    // receiver gets them in clear (the last test).
    expect(events[1]!.data).toMatchObject({
      id: s.id,
      message: expect.stringMatching(/^pii:v1:/),
      document_references: [expect.stringMatching(/^pii:v1:/)],
    });
    expect(JSON.stringify(events[1]!.data)).not.toContain('Utility bill attached');
  });

  it('lets only the investor who owns it answer, with a valid body', async () => {
    const s = await inReview(svc, w);
    await ask(s.id, 'Who is the beneficial owner?');
    expect((await provide(s.id, { message: 'me' }, w.staff)).status).toBe(403);
    const stranger = await actor(svc, w.org, ['investor'], { kycCompleted: true });
    expect((await provide(s.id, { message: 'me' }, stranger)).status).toBe(404);
    const empty = await provide(s.id, { message: '   ' });
    expect(empty.status).toBe(422);
    const tooMany = await provide(s.id, {
      message: 'x',
      documentReferences: Array.from({ length: 21 }, (_, i) => `d${i}`),
    });
    expect(tooMany.status).toBe(422);
    expect((await w.api.get(`/issuance/subscriptions/${s.id}`, w.investor.token)).body.data.info_requested).toBe(
      'Who is the beneficial owner?',
    );
  });

  it('sends subscription.info_provided only to endpoints that name it, never through "*"', async () => {
    const star = await registerHook(svc, receiver, w.staff, `${set}-info-star`, ['*']);
    const named = await registerHook(svc, receiver, w.staff, `${set}-info-named`, [INFO_PROVIDED]);
    const s = await inReview(svc, w);
    await ask(s.id, 'Bank statement');
    await provide(s.id, { message: 'Sent' });
    const knex = svc.orm.em.getConnection().getKnex();
    const deliveredTo = (type: string) =>
      until(`a ${type} event delivered`, async () => {
        const [ev] = await knex('events')
          .where({ type })
          .whereRaw(`data->>'id' = ?`, [s.id])
          .whereNotNull('dispatched_at')
          .select('id');
        if (!ev) return undefined;
        return knex('webhook_deliveries').where({ event_id: ev.id }).pluck('endpoint_id');
      });
    expect(await deliveredTo(INFO_PROVIDED)).toEqual([named.id]);
    expect(await deliveredTo('subscription.info_requested')).toEqual([star.id]);
    const [got] = await receiver.waitFor(`${set}-info-named`, 1);
    expect(JSON.parse(got!.body)).toMatchObject({ event_type: INFO_PROVIDED, data: { id: s.id, message: 'Sent' } });
  });
});
