/**
 * One subscription's run, step by step (spec §3): the commands it accepts, the change each commits,
 * and what it does on its own between them (collect, close sessions, apply notifications). Every
 * handler is a one-liner over workflows/subscription-transitions.ts; each change is projected to
 * PostgreSQL, with its events, before the command that caused it answers.
 */
import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { UpdateDefinition } from '@temporalio/common';
import { Mutex } from 'async-mutex';
import type { Activities } from '../activities';
import { EVENT_SOURCES, type ServiceEvent } from '../domain/events';
import { CLOSES_SESSIONS, TERMINAL, type SubscriptionState } from '../domain/subscription';
import { toSubscriptionView, type SubscriptionView } from '../domain/subscription-view';
import { refusal } from '../domain/refusal';
import * as m from '../domain/subscription-messages';
import { applyPayment } from './subscription-payments';
import { guards, initialState, transitions, type Change } from './subscription-transitions';
import { planRefund, refundedByStaff } from './subscription-refunds';
import { refundThroughIntents, refundUnrecorded } from './refund-intents';
import { asRefusal, failedWith, idempotencyReused, isNotRecorded, notRecorded } from './subscription-failures';
import { referenceCodeFrom } from './reference-code';
import { DeliveryChildren } from './delivery-children';
import { expiryDue, unsignedDeadline } from './subscription-expiry';
import { SubscriptionStatusKey } from '../domain/search-attributes';
import { withKeptFields, type PersonalFields } from '../domain/personal-fields';
import { REFERENCE_CODE_TAKEN, retryPolicy } from '../domain/activity-failures';

// Every policy retries what retrying may cure and nothing PostgreSQL refused for good
// (domain/activity-failures.ts, docs/decisions/0364-refused-records-end-the-command.md).
const { recordTransition, releaseCapacity } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15s',
  // The projection rides out any outage (a restart, a lost connection): retried until it lands,
  // and listed as needing attention while it keeps failing (activities/activity-failures.ts). A
  // value or row PostgreSQL refuses is not retried: the command is refused instead.
  retry: retryPolicy({ initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '30s' }),
});
// Investor commands wait on these, so they give up soon and the command reports it.
const processor = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: retryPolicy({ initialInterval: '500ms', maximumInterval: '5s', maximumAttempts: 3 }),
});
// Collection after approval waits for nobody: ride out a processor outage (the idempotency key
// keeps retries to one charge); only a non-retryable refusal ends it.
const collector = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: retryPolicy({ initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10m' }),
});
/** Closing sessions after cancel or void is a safeguard, not a gate: a few tries, then give up. */
const closer = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: retryPolicy({ initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 8 }),
});

/** Patches: workflows started before them replay the old command sequence (test/replay). */
const COLLECT_OUTSIDE_LOCK = 'collect-outside-lock';
const CLOSE_SESSIONS = 'close-sessions-on-cancel-or-void';
const PAYMENTS_COMPARED = 'payments-compared-with-what-is-owed';
/** A refused record refuses its command, and a refused first record ends the run (decisions 0364, 0365). */
const REFUSED_RECORDS_ANSWERED = 'refused-records-answered';
/** No run holds more pending delivery children than Temporal allows (docs/decisions/0367-temporal-limits-kept.md). */
const CHILDREN_HELD = 'delivery-children-held-within-limit';
const DRAFT_EXPIRY = 'unsigned-drafts-expire';
const REFUND_INTENTS = 'refund-intents-recorded';
/** After a terminal state, payment notifications (refunds, disputes) are still taken this long. */
const LINGER_AFTER_TERMINAL = '90 days';
/** Work of its own (a notification, a collection's outcome) whose record was refused is tried again after this. */
const HELD_BACK_FOR = '1 hour';

export class SubscriptionRun {
  private state: SubscriptionState;
  private projected: boolean;
  private readonly pendingPayments: m.PaymentNotification[];
  private readonly seen: Set<string>;
  /** Commands run one at a time; the guard runs again inside, against the state it will change. */
  private readonly lock = new Mutex();
  /** Set A: the collection in flight, outside the lock, so an outage blocks no other command. */
  private collection: CancellationScope | null = null;
  /** Cancel or void closed the processor's open sessions (again after a restart: it is idempotent). */
  private sessionsClosed = false;
  /** The refusal of the first record, when PostgreSQL would not store it: the create's answer; the run then ends. */
  private creationRefused: ApplicationFailure | null = null;
  /** Work of its own whose record was refused waits for the next change, or HELD_BACK_FOR. */
  private heldBack = false;
  /** `workflow` shape: the delivery children this run holds (docs/decisions/0367-temporal-limits-kept.md). */
  private readonly children = new DeliveryChildren();
  /** The deadline the commitment sweep gave an unsigned subscription that holds none of its own. */
  private givenDeadline: string | null = null;
  /** The sweep's signal came since the wait began: wait again, against the deadline it gave. */
  private deadlineGiven = false;

  constructor(input: m.SubscriptionWorkflowInput) {
    this.state = 'start' in input ? initialState(input.start) : input.resume;
    this.projected = 'resume' in input;
    this.pendingPayments = 'resume' in input ? [...input.pendingPayments] : [];
    this.seen = new Set<string>('resume' in input ? input.seenNotifications : []);
  }

  /** §4.1: the commands as updates, processor notifications as a signal, the state as a query. */
  acceptCommands(): void {
    setHandler(m.getSubscription, () => this.state);
    setHandler(m.paymentNotified, (n) => {
      if (this.seen.has(n.processorEventId)) return;
      this.seen.add(n.processorEventId);
      this.pendingPayments.push(n);
    });
    setHandler(m.draftDeadline, ({ expiresAt }) => {
      if (Number.isNaN(Date.parse(expiresAt))) return;
      this.givenDeadline ??= expiresAt;
      this.deadlineGiven = true;
    });
    // Not queued: it only waits for the first projection, which announceCreation writes.
    setHandler(
      m.created,
      async () => {
        await condition(() => this.projected || this.creationRefused !== null);
        if (this.creationRefused) throw this.creationRefused;
        return toSubscriptionView(this.state);
      },
      {
        validator: (i) => {
          if (i.requestHash !== this.state.requestHash) throw idempotencyReused();
        },
      },
    );
    this.investorCommands();
    this.staffCommands();
    // A new handler only: histories from before it never carry the update, so nothing to patch.
    this.command(
      m.sealPersonalData,
      () => undefined,
      (i) => this.sealPersonalData(i),
    );
  }

  /**
   * The first projection and its `subscription.created` (skipped when resumed). When PostgreSQL
   * refuses it for good, the create is answered with the refusal, the capacity held for it is given
   * back, and the run fails with it: there is no subscription to keep
   * (docs/decisions/0365-refused-create-ends-its-workflow.md).
   */
  async announceCreation(): Promise<void> {
    await this.lock.runExclusive(async () => {
      if (this.projected) return;
      try {
        await this.commit({ state: this.state, events: [{ type: 'subscription.created' }] });
        this.projected = true;
      } catch (err) {
        if (!isNotRecorded(err)) throw err;
        this.creationRefused = err;
      }
    });
    if (!this.creationRefused) return;
    await condition(allHandlersFinished);
    await releaseCapacity(this.state.id);
    throw this.creationRefused;
  }

  /**
   * Between commands: collect, close sessions, apply notifications, until the subscription has
   * been terminal and quiet for the whole linger period (or history grows long: continue as new).
   */
  async untilSettled(): Promise<SubscriptionView> {
    for (;;) {
      const terminal = TERMINAL.includes(this.state.status);
      this.deadlineGiven = false;
      const expiresIn = this.expiresIn();
      const wake = () =>
        this.readyPayment() ||
        (this.needsCollection() && !this.collection) ||
        this.needsClosing() ||
        workflowInfo().continueAsNewSuggested ||
        TERMINAL.includes(this.state.status) !== terminal ||
        this.deadlineGiven;
      let woke = true;
      if (terminal) woke = await condition(wake, LINGER_AFTER_TERMINAL);
      else if (expiresIn === null) await condition(wake);
      else if (expiresIn <= 0 || !(await condition(wake, expiresIn))) await this.expireIfDue();
      if (!woke) break; // a terminal subscription left alone for the whole linger period
      if (workflowInfo().continueAsNewSuggested) {
        await condition(() => allHandlersFinished() && !this.collection && this.children.settled());
        return continueAsNew<m.SubscriptionWorkflow>({
          resume: this.state,
          pendingPayments: this.pendingPayments,
          seenNotifications: [...this.seen].slice(-500),
        });
      }
      if (this.needsClosing()) this.closeSessions();
      if (this.needsCollection() && !this.collection) await this.collectInBackground();
      await this.lock.runExclusive(() => this.drainPayments());
    }
    await condition(allHandlersFinished);
    return toSubscriptionView(this.state);
  }

  // ---- commands --------------------------------------------------------------------------

  private investorCommands(): void {
    const s = () => this.state;
    this.command(
      m.requestSignature,
      () => guards.requestSignature(s()),
      () => this.commit(transitions.requestSignature(s())),
    );
    this.command(
      m.signAgreement,
      () => guards.sign(s()),
      (i) => this.commit(transitions.sign(s(), i)),
    );
    this.command(
      m.createSetupSession,
      () => guards.setupSession(s()),
      (i) => this.startSetup(i),
    );
    this.command(
      m.finalizeSetup,
      () => guards.finalizeSetup(s()),
      () => this.finalizeSetup(),
    );
    this.command(
      m.submitForReview,
      (i) => guards.submitForReview(s(), i),
      (i) => this.submitForReview(i),
    );
    this.command(
      m.createCheckoutSession,
      () => guards.checkoutSession(s()),
      (i) => this.startCheckout(i),
    );
    this.command(
      m.cancel,
      () => guards.cancel(s()),
      () => this.commit(transitions.cancel(s())),
    );
    // A new handler only: histories from before it never carry the update, so nothing to patch.
    this.command(
      m.provideInfo,
      () => guards.provideInfo(s()),
      (i) => this.commit(transitions.provideInfo(s(), i, new Date().toISOString())),
    );
  }

  private staffCommands(): void {
    const s = () => this.state;
    // A new handler only: histories from before it never carry the update, so nothing to patch.
    this.command(
      m.cancelByStaff,
      () => guards.cancelByStaff(s()),
      (i) => this.commit(transitions.cancelByStaff(s(), i)),
    );
    this.command(
      m.approve,
      () => guards.approve(s()),
      () => this.commit(transitions.approve(s())),
    );
    this.command(
      m.reject,
      () => guards.reject(s()),
      (i) => this.commit(transitions.reject(s(), i)),
    );
    this.command(
      m.voidAgreement,
      () => guards.void(s()),
      (i) => this.voidAgreement(i),
    );
    this.command(
      m.requestInfo,
      () => guards.requestInfo(s()),
      (i) => this.commit(transitions.requestInfo(s(), i, new Date().toISOString())),
    );
    this.command(
      m.issueShares,
      () => guards.issueShares(s()),
      () => this.commit(transitions.issueShares(s(), uuid4(), new Date().toISOString())),
    );
    this.command(
      m.retryCollection,
      () => guards.retryCollection(s()),
      () => this.commit(transitions.retryCollection(s())),
    );
    this.command(
      m.refund,
      (i) => void planRefund(s(), i),
      (i) => this.refund(i),
    );
    this.command(
      m.reconcile,
      (i) => guards.reconcile(s(), i.amount),
      () => this.commit(transitions.reconcile(s())),
    );
  }

  /** An update: the validator refuses without touching history; the handler re-checks in turn. */
  private command<R, A extends unknown[]>(
    def: UpdateDefinition<R, A>,
    guard: (...args: NoInfer<A>) => void,
    run: (...args: NoInfer<A>) => Promise<R>,
  ): void {
    // A run whose first record was refused takes no command: it ends (announceCreation).
    const admit = (...args: A) => {
      if (this.creationRefused) throw this.creationRefused;
      guard(...args);
    };
    const handler = (...args: A) =>
      this.lock.runExclusive(() => {
        admit(...args);
        return run(...args);
      });
    setHandler(def, handler, { validator: admit });
  }

  /**
   * Fields written in clear before sealing existed take the sealed values the reseal brings
   * (docs/decisions/0384-resealing-fields-written-in-clear.md); the change is projected, with no event.
   */
  private async sealPersonalData(kept: PersonalFields): Promise<SubscriptionView> {
    const next = withKeptFields(this.state, kept);
    if (next === this.state) return toSubscriptionView(this.state);
    return this.commit({ state: next, events: [] });
  }

  /** Projects the change with its events, numbered per subscription, then makes it the state. */
  private async commit(ch: Change): Promise<SubscriptionView> {
    const now = new Date().toISOString();
    // Per-subscription event order (docs/decisions/0118-event-sequence.md): kept in
    // state, so replays and continue-as-new carry it; states from before it existed count on from 0.
    let sequence = this.state.eventSequence ?? 0;
    const base: SubscriptionState = { ...ch.state, version: this.state.version + 1, updatedAt: now };
    const view = toSubscriptionView(base);
    const events: ServiceEvent[] = ch.events.map((e) => {
      sequence += 1;
      const data = e.type.startsWith('subscription.')
        ? { ...view, ...e.data }
        : { ...e.data, investor_id: base.investorId };
      return {
        id: uuid4(),
        type: e.type,
        source: EVENT_SOURCES.issuance,
        orgId: base.orgId,
        occurredAt: now,
        data: { ...data, sequence },
        ...(e.audit ? { audit: e.audit } : {}),
      };
    });
    const next: SubscriptionState = { ...base, eventSequence: sequence };
    // `workflow` shape: the projection answers the deliveries to start as this workflow's children,
    // as many as the run has room for (the rest become workflows of their own). The commands depend
    // only on that recorded answer (none in histories from before it existed, none in `engine`
    // shape), so every history replays as it ran; runs from before the room name none.
    const room = patched(CHILDREN_HELD) ? [this.children.room()] : [];
    let children;
    try {
      children = (await recordTransition(next, events, ...room)) ?? [];
    } catch (err) {
      // Refused for good: the state stays as it was and the lock is released as the refusal
      // leaves; the command is answered with it. Runs from before it retried without end.
      const refused = patched(REFUSED_RECORDS_ANSWERED) ? notRecorded(err, 'recordTransition', this.state.id) : null;
      throw refused ?? err;
    }
    if (children.length > 0) await this.children.start(children);
    if (next.status !== this.state.status) {
      upsertSearchAttributes([{ key: SubscriptionStatusKey, value: next.status }]);
    }
    this.state = next;
    this.heldBack = false;
    return view;
  }

  /**
   * A change of the workflow's own making (a notification, a collection's outcome), recorded; false
   * when its record was refused for good: then such work waits for the next change or HELD_BACK_FOR,
   * rather than trying again at once, and the subscription is listed as needing attention.
   */
  private async recordedOnItsOwn(ch: Change): Promise<boolean> {
    try {
      await this.commit(ch);
      return true;
    } catch (err) {
      if (!isNotRecorded(err)) throw err;
      this.heldBack = true;
      const version = this.state.version;
      void CancellationScope.nonCancellable(() => sleep(HELD_BACK_FOR)).then(() => {
        if (this.state.version === version) this.heldBack = false;
      });
      return false;
    }
  }

  /** A drawn reference code may already be taken (unique in the projection): draw again. */
  private async submitForReview(i: m.SubmitForReviewInput): Promise<SubscriptionView> {
    for (;;) {
      try {
        return await this.commit(transitions.submitForReview(this.state, i, referenceCodeFrom(uuid4())));
      } catch (err) {
        if (!failedWith(err, REFERENCE_CODE_TAKEN)) throw err;
      }
    }
  }

  /** A void stops a collection in flight; money that moved anyway arrives later and is held. */
  private async voidAgreement(i: m.ReasonInput): Promise<SubscriptionView> {
    const view = await this.commit(transitions.void(this.state, i));
    this.collection?.cancel();
    return view;
  }

  /**
   * Staff send money back (docs/decisions/0284-refunds.md): one processor refund per payment the
   * request takes from, each recorded before it is sent and after it is answered
   * (docs/decisions/0374-refund-intents.md), under a key of its own so a retried activity refunds once.
   * What the processor refunded is recorded even when a later call fails; the failure is answered after.
   */
  private async refund(i: m.RefundInput): Promise<SubscriptionView> {
    const slices = planRefund(this.state, i);
    const { done, failure } = patched(REFUND_INTENTS)
      ? await refundThroughIntents(this.state, slices, i, processor.refundPayment)
      : await refundUnrecorded(this.state, slices, processor.refundPayment);
    const view = done.length ? await this.commit(refundedByStaff(this.state, done, i)) : null;
    if (failure !== null) asRefusal(failure);
    return view!;
  }

  // ---- unsigned drafts expire (docs/decisions/0368-unsigned-drafts-expire.md) ----------------

  /**
   * Ms until an unsigned subscription's deadline, or null: none applies, or the wait began before
   * drafts expired (replayed without the patch, it keeps the wait it had).
   */
  private expiresIn(): number | null {
    const deadline = unsignedDeadline(this.state, this.givenDeadline);
    if (deadline === null || !patched(DRAFT_EXPIRY)) return null;
    return deadline - Date.now();
  }

  /** Cancelled as expired, unless a command moved it on (signed, cancelled) while the timer ran. */
  private async expireIfDue(): Promise<void> {
    await this.lock.runExclusive(async () => {
      if (expiryDue(this.state, this.givenDeadline, Date.now())) await this.commit(transitions.expire(this.state));
    });
  }

  // ---- processor sessions ----------------------------------------------------------------

  private async startSetup(i: m.SessionInput): Promise<m.SessionView> {
    const session = await processor.createSetupSession(this.sessionRequest(i)).catch(asRefusal);
    await this.commit({
      state: {
        ...this.state,
        paymentMethod: i.paymentMethod,
        setupSessionId: session.sessionId,
        paymentMethodLinked: false,
      },
      events: [],
    });
    return { session_id: session.sessionId, session_url: session.sessionUrl };
  }

  private async finalizeSetup(): Promise<SubscriptionView> {
    const result = await processor.getSetupResult(this.state.setupSessionId!).catch(asRefusal);
    if (result.status !== 'complete') {
      throw refusal(409, 'SETUP_INCOMPLETE', `The payment setup session is ${result.status}; complete it first`);
    }
    return this.state.paymentMethodLinked
      ? toSubscriptionView(this.state)
      : this.commit(transitions.linkPaymentMethod(this.state));
  }

  private async startCheckout(i: m.SessionInput): Promise<m.SessionView> {
    const session = await processor
      .createCheckoutSession({ ...this.sessionRequest(i), amount: this.state.totalAmount })
      .catch(asRefusal);
    await this.commit({
      state: { ...this.state, paymentMethod: i.paymentMethod, checkoutSessionId: session.sessionId },
      events: [],
    });
    return { session_id: session.sessionId, session_url: session.sessionUrl };
  }

  private sessionRequest(i: m.SessionInput) {
    return {
      subscriptionId: this.state.id,
      investorId: this.state.investorId,
      method: i.paymentMethod,
      currency: this.state.currency,
      successUrl: i.successUrl,
      cancelUrl: i.cancelUrl,
    };
  }

  private needsClosing(): boolean {
    return CLOSES_SESSIONS.includes(this.state.status) && !this.sessionsClosed;
  }

  /**
   * In the background, so a processor outage holds up neither commands nor late notifications;
   * given up after a few tries: a payment that gets through anyway is held (applyPayment).
   */
  private closeSessions(): void {
    this.sessionsClosed = true;
    if (!patched(CLOSE_SESSIONS)) return;
    closer.closeSessions(this.state.id).catch(() => undefined);
  }

  // ---- collection (Set A) ----------------------------------------------------------------

  /** Set A card/ACH: once approved, collect off-session; the outcome arrives as notifications. */
  private needsCollection(): boolean {
    const s = this.state;
    if (this.heldBack) return false;
    return s.set === 'A' && s.status === 'approved' && s.paymentMethodLinked && s.paymentStatus === 'pending';
  }

  /** Before the patch the collection held the lock; histories recorded then replay that way. */
  private async collectInBackground(): Promise<void> {
    if (!patched(COLLECT_OUTSIDE_LOCK)) {
      await this.lock.runExclusive(() => this.collect(true));
      return;
    }
    const scope = new CancellationScope();
    this.collection = scope;
    scope
      .run(() => this.collect(false))
      .catch(() => undefined)
      .finally(() => {
        if (this.collection === scope) this.collection = null;
      });
  }

  private async collect(locked: boolean): Promise<void> {
    const attempt = this.state.collectionAttempts ?? 0;
    const request = {
      subscriptionId: this.state.id,
      setupSessionId: this.state.setupSessionId!,
      amount: this.state.totalAmount,
      currency: this.state.currency,
      idempotencyKey: `collect-${this.state.id}-${attempt}`,
    };
    let outcome: Partial<SubscriptionState> | null;
    try {
      await collector.collectPayment(request);
      outcome = { paymentStatus: 'processing' };
    } catch (err) {
      if (isCancellation(err)) return; // voided meanwhile
      // Only a refusal reaches here (outages are retried): record it; the workflow itself goes on.
      outcome = { paymentStatus: 'failed', statusReason: `collection refused: ${(err as Error).message}` };
    }
    // Recorded only if nothing moved the subscription on while the processor was called.
    const stillOurs = () =>
      this.state.status === 'approved' &&
      this.state.paymentStatus === 'pending' &&
      (this.state.collectionAttempts ?? 0) === attempt;
    const record = async () => {
      if (stillOurs()) await this.recordedOnItsOwn({ state: { ...this.state, ...outcome }, events: [] });
    };
    if (locked) await record();
    else await this.lock.runExclusive(record);
  }

  // ---- processor notifications -----------------------------------------------------------

  /** Applies every notification the state is ready for; keeps the rest for after the next change. */
  private async drainPayments(): Promise<boolean> {
    let progressed = false;
    for (let i = 0; i < this.pendingPayments.length && !this.heldBack;) {
      const n = this.pendingPayments[i]!;
      const ch = applyPayment(this.state, n, patched(PAYMENTS_COMPARED));
      if (!ch) {
        i++;
        continue;
      }
      this.pendingPayments.splice(i, 1);
      // A notification whose record is refused stays, to be applied again later.
      if ((ch.state !== this.state || ch.events.length) && !(await this.recordedOnItsOwn(ch))) {
        this.pendingPayments.splice(i, 0, n);
        break;
      }
      progressed = true;
    }
    return progressed;
  }

  private readyPayment(): boolean {
    return !this.heldBack && this.pendingPayments.some((n) => applyPayment(this.state, n) !== undefined);
  }
}
