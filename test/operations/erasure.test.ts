import { randomBytes, randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { INFO_PROVIDED } from '../../domain/events';
import { subscriptionWorkflowId } from '../../domain/subscription';
import { appendAuditEvent } from '../../db/audit-log';
import { ERASED } from '../../lib/personal-data';
import { actor } from '../support/fixtures';
import { ownerUrlOf, startService, type TestService } from '../support/service';
import { lifecycleWorld, type LifecycleWorld } from '../support/subscriptions';
import { PATHS, registerHook } from '../webhooks/support/hooks';
import { Receiver } from '../webhooks/support/receiver';
import { until } from '../support/wait';
import { auditVerify, checkpointNow } from './support/audit-tamper';
import { cliHistory } from './support/temporal-history';

/**
 * Erasure by crypto-shredding (docs/decisions/0313-erasure-by-crypto-shredding.md): after a whole
 * subscription, an admin erases the investor; their personal data is then in clear in no table, no
 * stored body and no workflow history (not even through the payload codec), every read shows the
 * erased marker, the audit chain still verifies, and the amounts and statuses remain.
 */
describe('erasing an investor', () => {
  const operators = randomUUID();
  let svc: TestService;
  let w: LifecycleWorld;
  let receiver: Receiver;
  let owner: PgClient;

  beforeAll(async () => {
    [svc, receiver] = await Promise.all([
      startService({
        set: 'A',
        auditCheckpoints: true,
        env: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true', CODEC_SERVER_ORG_IDS: operators },
      }),
      Receiver.start(),
    ]);
    w = await lifecycleWorld(svc);
    owner = new PgClient({ connectionString: ownerUrlOf(svc.config.DATABASE_URL) });
    await owner.connect();
  });
  afterAll(async () => {
    await owner?.end();
    await svc?.stop();
    await receiver?.stop();
  });

  /** Every table of the database whose text holds `value`, read as the owner (no row rights in the way). */
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

  it('leaves nothing personal in clear after a whole subscription, while amounts, statuses and the audit chain stay', async () => {
    const tag = randomBytes(4).toString('hex');
    const personal = {
      signature: `Zephyrine Quillfeather ${tag}`,
      ip: `198.51.${100 + (parseInt(tag.slice(0, 2), 16) % 100)}.${parseInt(tag.slice(2, 4), 16) % 250}`,
      answer: `Passport number QX${tag} attached`,
      reference: `vault://passport-${tag}.pdf`,
      fileName: `zephyrine-quillfeather-${tag}-w2.pdf`,
    };
    const hook = `erase-${tag}`;
    const infoHook = `erase-info-${tag}`;
    await registerHook(svc, receiver, w.staff, hook, ['*']);
    // Refuses the answer's delivery until it no longer carries the answer: it is pending at the erasure.
    const info = await registerHook(svc, receiver, w.staff, infoHook, [INFO_PROVIDED], { refuse: [personal.answer] });

    // A whole subscription, Set A by wire: sign, review with an information request answered, approve, reconcile.
    const s = await w.create();
    await w.post(s.id, 'request-signature', w.investor);
    const signed = await w.post(s.id, 'sign-agreement', w.investor, {
      signature: personal.signature,
      signedAt: '2026-11-21T10:00:00Z',
      ipAddress: personal.ip,
    });
    expect(signed.status).toBe(200);
    const review = await w.post(s.id, 'submit-for-review', w.investor, { paymentMethod: 'wire' });
    expect(review.status).toBe(200);
    expect((await w.post(s.id, 'request-info', w.staff, { reason: 'Proof of identity, please' })).status).toBe(200);
    const answered = await w.post(s.id, 'provide-info', w.investor, {
      message: personal.answer,
      documentReferences: [personal.reference],
    });
    expect(answered.status).toBe(200);
    // Before the erasure, the investor's own words read back in clear.
    expect(answered.body.data.info_requests[0].answer).toMatchObject({
      message: personal.answer,
      document_references: [personal.reference],
    });
    // An audit entry whose before/after holds a personal field holds it sealed, as the projection does: its hash
    // covers the sealed form, which the erasure leaves as it is (no route writes one today; decision 0313).
    const [provided] = (await w.events(s.id)).filter((e) => e.type === INFO_PROVIDED);
    const sealedAnswer: string = provided!.data.message;
    expect(sealedAnswer).toMatch(/^pii:v1:/);
    await appendAuditEvent(svc.orm.em.getConnection().getKnex(), {
      orgId: w.org,
      actor: {
        userId: w.staff.userId,
        roles: ['staff'],
        apiKeyId: null,
        session: null,
        clientAddress: null,
        requestId: null,
      },
      action: 'subscription.review_note',
      subject: { type: 'subscription', id: s.id },
      result: { outcome: 'succeeded' },
      before: { answer: sealedAnswer },
    });
    expect((await w.post(s.id, 'approve', w.staff)).status).toBe(200);
    const done = await w.api.post(
      '/issuance/reconciliations',
      w.staff.token,
      { referenceCode: review.body.data.reference_code, amount: '500.00' },
      { 'idempotency-key': randomUUID() },
    );
    expect(done.body.data).toMatchObject({ status: 'completed', payment_status: 'in_escrow', total_amount: '500.00' });

    const accreditation = await w.api.post('/identity/accreditations', w.investor.token, { method: 'income' });
    expect(accreditation.status).toBe(201);
    const doc = await w.api.post(`/identity/accreditations/${accreditation.body.data.id}/documents`, w.investor.token, {
      file_name: personal.fileName,
      content_type: 'application/pdf',
      sha256: 'a'.repeat(64),
    });
    expect(doc.status).toBe(201);
    // Delivered in clear while the investor was not erased (webhooks already delivered are not recalled).
    const completed = await until('the subscription.completed delivery', async () =>
      (await receiver.received(hook)).find((d) => d.body.includes('subscription.completed')),
    );
    expect(completed!.body).toContain(personal.answer);
    const refused = await receiver.waitFor(infoHook, 1);
    expect(refused[0]!.status).toBe(500);

    const reviewNotes = () => w.api.get('/audit/events?action=subscription.review_note', w.admin.token);
    expect((await reviewNotes()).body.data.items[0].before).toEqual({ answer: personal.answer });
    // The CSV export is a read like the JSON one: opened, never the sealed form.
    const reviewNotesCsv = async () => {
      const res = await fetch(`${svc.baseUrl}/audit/events.csv?action=subscription.review_note`, {
        headers: { authorization: `Bearer ${w.admin.token}` },
      });
      expect(res.status).toBe(200);
      return res.text();
    };
    const csvBefore = await reviewNotesCsv();
    expect(csvBefore).toContain(personal.answer);
    expect(csvBefore).not.toContain('pii:v1:');

    // Only an admin of the investor's organisation erases, and not while a legal hold stands.
    const path = `/identity/users/${encodeURIComponent(w.investor.userId)}`;
    expect((await w.api.post(`${path}/erase`, w.staff.token, {})).status).toBe(403);
    const hold = await w.api.post(`${path}/legal-hold`, w.admin.token, { reason: 'Litigation L-1' });
    expect(hold.status).toBe(200);
    expect(hold.body.data).toMatchObject({ user_id: w.investor.userId, reason: 'Litigation L-1' });
    const held = await w.api.post(`${path}/erase`, w.admin.token, {});
    expect(held.status).toBe(409);
    expect(held.body.error.code).toBe('LEGAL_HOLD');
    expect((await w.api.delete(`${path}/legal-hold`, w.admin.token)).status).toBe(204);
    expect((await w.api.delete(`${path}/legal-hold`, w.admin.token)).status).toBe(404);

    const erased = await w.api.post(`${path}/erase`, w.admin.token, {});
    expect(erased.status).toBe(200);
    expect(erased.body.data).toMatchObject({
      user_id: w.investor.userId,
      erased_by: w.admin.userId,
      keys_destroyed: 1,
    });
    const again = await w.api.post(`${path}/erase`, w.admin.token, {});
    expect(again.body.data).toMatchObject({ erased_at: erased.body.data.erased_at, keys_destroyed: 0 });

    // Every read shows the marker; the amounts, statuses and dates a regulator needs remain.
    const read = await w.api.get(`/issuance/subscriptions/${s.id}`, w.staff.token);
    expect(read.body.data).toMatchObject({
      status: 'completed',
      payment_status: 'in_escrow',
      total_amount: '500.00',
      signed_at: '2026-11-21T10:00:00Z',
      subscription_agreement_signed: true,
      investor_id: w.investor.userId,
    });
    expect(read.body.data.info_requests[0]).toMatchObject({
      message: 'Proof of identity, please',
      answer: { message: ERASED, document_references: [ERASED] },
    });

    expect((await reviewNotes()).body.data.items.map((e: { before: unknown }) => e.before)).toEqual([
      { answer: ERASED },
    ]);
    const csvAfter = await reviewNotesCsv();
    expect(csvAfter).toContain(ERASED);
    expect(csvAfter).not.toContain(personal.answer);
    expect(csvAfter).not.toContain('pii:v1:');

    // A delivery still pending at the erasure goes out with the marker.
    const deliveries = await w.api.get(`${PATHS.A.deliveries}?endpoint_id=${info.id}`, w.staff.token);
    const pending = deliveries.body.data.items.find((d: { event_type: string }) => d.event_type === INFO_PROVIDED);
    expect(pending).toBeDefined();
    const retried = await w.api.post(`${PATHS.A.deliveries}/${pending.id}/retry`, w.staff.token, {});
    expect([202, 409]).toContain(retried.status); // 409: an automatic retry got there first
    const sent = await until('the info request delivered (200)', async () =>
      (await receiver.received(infoHook)).find((d) => d.status === 200),
    );
    expect(sent!.verified).toBe(true);
    expect(JSON.parse(sent!.body).data).toMatchObject({ message: ERASED, document_references: [ERASED] });

    // New personal data about the erased investor is not kept: a new signature is stored as the marker.
    const later = await w.create();
    await w.post(later.id, 'request-signature', w.investor);
    const newSignature = `Zephyrine again ${tag}`;
    const signedLater = await w.post(later.id, 'sign-agreement', w.investor, {
      signature: newSignature,
      signedAt: '2026-11-22T10:00:00Z',
    });
    expect(signedLater.status).toBe(200);
    const state = await owner.query(`select state->>'signature' as signature from subscriptions where id = $1`, [
      later.id,
    ]);
    expect(state.rows[0].signature).toBe(ERASED);

    // In no table, no stored body, no attempt excerpt and no idempotency answer: the whole database, as its owner.
    for (const value of [...Object.values(personal), newSignature])
      expect([value, await tablesHolding(value)]).toEqual([value, []]);
    expect(await owner.query(`select 1 from personal_data_keys where user_id = $1`, [w.investor.userId])).toMatchObject(
      {
        rowCount: 0,
      },
    );

    // No history in clear: neither as Temporal stores it nor through the codec server an operator uses.
    const operator = await actor(svc, operators, ['admin']);
    for (const id of [s.id, later.id]) {
      const codec = { endpoint: `${svc.baseUrl}/console/codec`, auth: `Bearer ${operator.token}` };
      const [raw, opened] = await Promise.all([
        cliHistory(svc, subscriptionWorkflowId(id)),
        cliHistory(svc, subscriptionWorkflowId(id), codec),
      ]);
      expect(opened).toContain(id); // the codec did open the history
      for (const value of [...Object.values(personal), newSignature]) {
        expect(raw).not.toContain(value);
        expect(opened).not.toContain(value);
      }
    }

    // The erasure, the hold and the refusal are audited, and the chain still verifies.
    const audited = await owner.query<{ action: string; outcome: string; error_code: string | null }>(
      `select action, outcome, error_code from audit_events where org_id = $1 and subject_type = 'user' order by seq`,
      [w.org],
    );
    expect(audited.rows).toEqual([
      { action: 'investor.legal_hold.place', outcome: 'succeeded', error_code: null },
      { action: 'investor.erase', outcome: 'refused', error_code: 'LEGAL_HOLD' },
      { action: 'investor.legal_hold.lift', outcome: 'succeeded', error_code: null },
      { action: 'investor.legal_hold.lift', outcome: 'refused', error_code: 'NOT_FOUND' },
      { action: 'investor.erase', outcome: 'succeeded', error_code: null },
    ]);
    await checkpointNow(svc);
    const verdict = await auditVerify(svc, w.org);
    expect(verdict.code).toBe(0);
    expect(verdict.stdout).toContain('chain holds');
  }, 240_000);

  it('erases in the admin’s own organisation only', async () => {
    const other = await actor(svc, w.org, ['investor'], { kycCompleted: true });
    const made = await w.api.post('/identity/accreditations', other.token, { method: 'income' });
    const doc = await w.api.post(`/identity/accreditations/${made.body.data.id}/documents`, other.token, {
      file_name: 'statement.pdf',
      content_type: 'application/pdf',
      sha256: 'b'.repeat(64),
    });
    expect(doc.status).toBe(201);
    // An admin of another organisation erases that organisation's user of the same id, not ours.
    const elsewhere = await actor(svc, randomUUID(), ['admin']);
    const res = await w.api.post(`/identity/users/${encodeURIComponent(other.userId)}/erase`, elsewhere.token, {});
    expect(res.status).toBe(200);
    expect(res.body.data.keys_destroyed).toBe(0);
    const keys = await owner.query(`select org_id from personal_data_keys where user_id = $1`, [other.userId]);
    expect(keys.rows).toEqual([{ org_id: w.org }]);
  });
});
