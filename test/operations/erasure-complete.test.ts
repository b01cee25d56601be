import { randomBytes, randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { INFO_PROVIDED } from '../../domain/events';
import { subscriptionWorkflowId, type SubscriptionState } from '../../domain/subscription';
import * as m from '../../domain/subscription-messages';
import { ERASED } from '../../lib/personal-data';
import { UNREADABLE } from '../../lib/personal-markers';
import { resealPersonalData } from '../../api/personal/reseal';
import { runPendingReseal } from '../../api/personal/reseal-at-start';
import { actor, approveKyc, newSubscription } from '../support/fixtures';
import { ownerUrlOf, startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';
import { registerHook } from '../webhooks/support/hooks';
import { Receiver } from '../webhooks/support/receiver';
import { cliHistory } from './support/temporal-history';

/**
 * Erasure is complete (docs/decisions/0381-erasure-complete.md): the self-reported accreditation is sealed
 * at create, a sealed value opens only in its own organisation, personal fields written before sealing
 * existed are sealed by `npm run personal-data -- reseal` (and erased by an erasure), and an erasure says
 * what it could not reach.
 */
describe('erasure, completed', () => {
  let svc: TestService;
  let w: LifecycleWorld;
  let owner: PgClient;
  let receiver: Receiver;

  beforeAll(async () => {
    [svc, receiver] = await Promise.all([
      startService({ set: 'A', env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' } }),
      Receiver.start(),
    ]);
    w = await lifecycleWorld(svc);
    owner = new PgClient({ connectionString: ownerUrlOf(svc.config.DATABASE_URL) });
    await owner.connect();
  }, 120_000);
  afterAll(async () => {
    await owner?.end();
    await svc?.stop();
    await receiver?.stop();
  });

  /** Every table of the database whose text holds `value`, read as the owner. */
  async function tablesHolding(value: string): Promise<string[]> {
    const tables = (
      await owner.query<{ name: string }>(
        `select quote_ident(table_name) as name from information_schema.tables
          where table_schema = 'public' and table_type = 'BASE TABLE'`,
      )
    ).rows.map((r) => r.name);
    const found: string[] = [];
    for (const t of tables) {
      const { rows } = await owner.query(`select 1 from ${t} x where strpos(x::text, $1) > 0 limit 1`, [value]);
      if (rows.length) found.push(t);
    }
    return found;
  }

  const queueItem = async (subscriptionId: string) =>
    (await w.api.get('/issuance/review-queue?limit=200', w.staff.token)).body.data.items.find(
      (i: { subscription: { id: string } }) => i.subscription.id === subscriptionId,
    );
  const erase = (userId: string) =>
    w.api.post(`/identity/users/${encodeURIComponent(userId)}/erase`, w.admin.token, {});

  it('seals the self-reported accreditation at create: opened for staff, in clear nowhere, [erased] after erasure', async () => {
    const investor = await actor(svc, w.org, ['investor'], { kycCompleted: true });
    await approveKyc(svc, investor);
    const self = `Jane Q Doe net worth 2M ${randomBytes(4).toString('hex')}`;
    const s = await w.create(investor, { accreditationStatus: self });
    await w.post(s.id, 'request-signature', investor);
    expect((await w.sign(s.id, investor)).status).toBe(200);
    expect((await w.post(s.id, 'submit-for-review', investor, { paymentMethod: 'wire' })).status).toBe(200);

    // Staff weigh it in clear; it is stored sealed, in every table and in the workflow's history.
    expect((await queueItem(s.id)).accreditation_self_reported).toBe(self);
    expect(await tablesHolding(self)).toEqual([]);
    expect(await cliHistory(svc, subscriptionWorkflowId(s.id))).not.toContain(self);

    const erased = await erase(investor.userId);
    expect(erased.status).toBe(200);
    expect(erased.body.data).toMatchObject({ keys_destroyed: 1, complete: true, unreached: [] });
    expect((await queueItem(s.id)).accreditation_self_reported).toBe(ERASED);
  }, 120_000);

  it('opens a sealed value only in its own organisation: copied into another one it reads as unreadable', async () => {
    const s = await w.signed();
    const { rows } = await owner.query(`select state->>'signature' as signature from subscriptions where id = $1`, [
      s.id,
    ]);
    const sealed: string = rows[0].signature;
    expect(sealed).toMatch(/^pii:v1:/);

    // Another organisation's staff write the sealed value into a text of their own.
    const other = await lifecycleWorld(svc);
    const theirs = await other.inReviewByWire();
    expect((await other.post(theirs.id, 'request-info', other.staff, { reason: sealed })).status).toBe(200);
    const read = await other.api.get(`/issuance/subscriptions/${theirs.id}`, other.staff.token);
    expect(read.body.data.info_requested).toBe(UNREADABLE);
    expect(JSON.stringify(read.body)).not.toContain('Ada Lovelace');

    // Its webhook carries the marker too, never the other organisation's investor's name.
    const hook = `copied-${randomBytes(3).toString('hex')}`;
    await registerHook(svc, receiver, other.staff, hook, ['subscription.info_requested']);
    const again = await other.inReviewByWire();
    expect((await other.post(again.id, 'request-info', other.staff, { reason: sealed })).status).toBe(200);
    const [sent] = await receiver.waitFor(hook, 1);
    expect(JSON.parse(sent!.body).data.message).toBe(UNREADABLE);
    expect(sent!.body).not.toContain('Ada Lovelace');
  }, 120_000);

  /**
   * A subscription as the API made it before personal fields were sealed: the workflow started and
   * commanded with the investor's words in clear (its history keeps them), answered, and delivered.
   */
  async function writtenBeforeSealing(investorId: string, tag: string, withDocument = true) {
    const clear = {
      accreditation: `self-reported ${tag} net worth 3M`,
      signature: `Hortensia Vallejo ${tag}`,
      ip: `203.0.113.${parseInt(tag.slice(0, 2), 16) % 250}`,
      answer: `My passport is PX${tag}`,
      reference: `vault://px-${tag}.pdf`,
      fileName: `hortensia-vallejo-${tag}.pdf`,
    };
    const start = newSubscription({
      orgId: w.org,
      offeringId: w.offering.offeringId,
      securityClassId: w.offering.securityClassId,
      investorId,
      accreditationStatus: clear.accreditation,
      pricePerUnit: '100.00',
      totalAmount: '200.00',
    });
    const handle = await svc.temporal.workflow.start(m.SUBSCRIPTION_WORKFLOW, {
      workflowId: subscriptionWorkflowId(start.id),
      taskQueue: svc.config.TEMPORAL_TASK_QUEUE,
      args: [{ start }],
    });
    await handle.executeUpdate(m.created, { args: [{ requestHash: null }] });
    await handle.executeUpdate(m.requestSignature);
    await handle.executeUpdate(m.signAgreement, {
      args: [{ signature: clear.signature, signedAt: '2026-11-21T10:00:00Z', ipAddress: clear.ip }],
    });
    await handle.executeUpdate(m.submitForReview, { args: [{ paymentMethod: 'wire' }] });
    await handle.executeUpdate(m.requestInfo, { args: [{ reason: 'Proof, please', actorId: w.staff.userId }] });
    await handle.executeUpdate(m.provideInfo, {
      args: [{ message: clear.answer, documentReferences: [clear.reference], actorId: investorId }],
    });
    if (withDocument) await documentNamedInClear(investorId, clear.fileName);
    return { id: start.id, handle, clear };
  }

  /** A document whose name was stored before file names were sealed. */
  async function documentNamedInClear(investorId: string, fileName: string) {
    const who = {
      userId: investorId,
      orgId: w.org,
      token: await svc.tokens.sign({ userId: investorId, orgId: w.org, roles: ['investor'], kycCompleted: true }),
    };
    const made = await w.api.post('/identity/accreditations', who.token, { method: 'income' });
    const doc = await w.api.post(`/identity/accreditations/${made.body.data.id}/documents`, who.token, {
      file_name: 'placeholder.pdf',
      content_type: 'application/pdf',
      sha256: 'c'.repeat(64),
    });
    expect(doc.status).toBe(201);
    await owner.query(`update accreditation_documents set file_name = $1 where accreditation_id = $2`, [
      fileName,
      made.body.data.id,
    ]);
  }

  it('erases fields written before sealing wherever they are kept, and says the history it could not reach', async () => {
    const tag = randomBytes(4).toString('hex');
    const investorId = `user-${randomUUID()}`;
    const hook = `before-${tag}`;
    await registerHook(svc, receiver, w.staff, hook, [INFO_PROVIDED]);
    const old = await writtenBeforeSealing(investorId, tag);
    await receiver.waitFor(hook, 1);
    expect(await tablesHolding(old.clear.answer)).toEqual(
      expect.arrayContaining(['subscriptions', 'events', 'webhook_event_bodies']),
    );

    const erased = await erase(investorId);
    // Its history still holds what the old API handed the workflow: the erasure says so, and is not complete.
    expect(erased.status).toBe(202);
    expect(erased.body.data).toMatchObject({
      user_id: investorId,
      complete: false,
      unreached: [{ place: 'workflow_histories', count: 1 }],
    });
    for (const value of Object.values(old.clear)) expect([value, await tablesHolding(value)]).toEqual([value, []]);
    const state: SubscriptionState = await old.handle.query(m.getSubscription);
    expect(state).toMatchObject({ signature: ERASED, signerIp: ERASED, accreditationStatus: ERASED });
    expect(state.infoExchanges![0]!.answer).toMatchObject({ message: ERASED, documentReferences: [ERASED] });
    const read = await w.api.get(`/issuance/subscriptions/${old.id}`, w.staff.token);
    expect(read.body.data.info_requests[0].answer).toMatchObject({ message: ERASED, document_references: [ERASED] });
    expect((await queueItem(old.id)).accreditation_self_reported).toBe(ERASED);
  }, 180_000);

  it('reseals fields written before sealing under the investor’s key, in batches, and a second run changes nothing', async () => {
    const tag = randomBytes(4).toString('hex');
    const investorId = `user-${randomUUID()}`;
    const old = await writtenBeforeSealing(investorId, tag);
    // A second one whose workflow has closed: its projection speaks for it.
    const closed = await writtenBeforeSealing(investorId, `${tag}c`, false);
    await closed.handle.terminate('closed before the reseal');

    const first = await resealPersonalData({ orm: svc.orm, temporal: svc.temporal, config: svc.config }, { batch: 1 });
    expect(first.unreached).toEqual([]);
    expect(first.sealed).toEqual(
      expect.arrayContaining([
        { place: 'subscriptions', count: 10 },
        { place: 'accreditation_documents', count: 1 },
        expect.objectContaining({ place: 'events' }),
      ]),
    );
    for (const value of [...Object.values(old.clear), ...Object.values(closed.clear)])
      expect([value, await tablesHolding(value)]).toEqual([value, []]);
    const closedRead = await w.api.get(`/issuance/subscriptions/${closed.id}`, w.staff.token);
    expect(closedRead.body.data.info_requests[0].answer.message).toBe(closed.clear.answer);
    // Both histories still hold what the old API handed them: noted for an erasure to report.
    const residues = await owner.query(`select subscription_id from personal_data_residues where user_id = $1`, [
      investorId,
    ]);
    expect(residues.rows.map((r) => r.subscription_id).sort()).toEqual([old.id, closed.id].sort());
    // Reads open them as they do any sealed value; the running workflow holds them sealed.
    const read = await w.api.get(`/issuance/subscriptions/${old.id}`, w.staff.token);
    expect(read.body.data.info_requests[0].answer).toMatchObject({
      message: old.clear.answer,
      document_references: [old.clear.reference],
    });
    expect((await queueItem(old.id)).accreditation_self_reported).toBe(old.clear.accreditation);
    const state: SubscriptionState = await old.handle.query(m.getSubscription);
    expect(state.signature).toMatch(/^pii:v1:/);
    expect(state.accreditationStatus).toMatch(/^pii:v1:/);

    // The pass migration 0096 asks for on an existing install: taken once, and finished when nothing is left.
    expect(await runPendingReseal({ orm: svc.orm, temporal: svc.temporal, config: svc.config })).toBe(true);
    const [asked] = (await owner.query(`select finished_at, outcome from personal_data_reseals`)).rows;
    expect(asked.finished_at).not.toBeNull();
    expect(asked.outcome.unreached).toEqual([]);
    expect(await runPendingReseal({ orm: svc.orm, temporal: svc.temporal, config: svc.config })).toBe(false);

    const second = await resealPersonalData({ orm: svc.orm, temporal: svc.temporal, config: svc.config }, { batch: 1 });
    expect(second).toEqual({ sealed: [], unreached: [] });
  }, 180_000);
});
