/**
 * One long-running workflow per subscription (spec §3). State lives in one object; every handler
 * is a one-liner over workflows/subscription-transitions.ts. Each change is projected to
 * PostgreSQL, with its events, before the command that caused it answers.
 */
import {
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { UpdateDefinition } from '@temporalio/common';
import { Mutex } from 'async-mutex';
import type { Activities } from '../activities';
import { EVENT_SOURCES, type ServiceEvent } from '../domain/events';
import { CLOSES_SESSIONS, TERMINAL, type NewSubscription, type SubscriptionState } from '../domain/subscription';
import { toSubscriptionView, type SubscriptionView } from '../domain/subscription-view';
import { refusal } from '../domain/refusal';
import * as m from '../domain/subscription-messages';
import { applyPayment, guards, initialState, transitions, type Change } from './subscription-transitions';
import { asRefusal, failedWith, idempotencyReused } from './subscription-failures';
import { referenceCodeFrom } from './reference-code';
import { SubscriptionStatusKey } from '../domain/search-attributes';

const { recordTransition } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15s',
  // The projection must land eventually: retry until it does.
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '30s' },
});
// Investor commands wait on these, so they give up soon and the command reports it.
const processor = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', maximumInterval: '5s', maximumAttempts: 3 },
});
// Collection after approval waits for nobody: ride out a processor outage (the idempotency key
// keeps retries to one charge); only a non-retryable refusal ends it.
const collector = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10m' },
});

/** Patches: workflows started before them replay the old command sequence (test/replay). */
const COLLECT_OUTSIDE_LOCK = 'collect-outside-lock';
const CLOSE_SESSIONS = 'close-sessions-on-cancel-or-void';
const PAYMENTS_COMPARED = 'payments-compared-with-what-is-owed';
/** The projection's answer when a reference code is already in use (activities/subscription-projection.ts). */
const REFERENCE_CODE_TAKEN = 'REFERENCE_CODE_TAKEN';

/** Closing sessions after cancel or void is a safeguard, not a gate: a few tries, then give up. */
const closer = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 8 },
});

/** After a terminal state, payment notifications (refunds, disputes) are still taken this long. */
const LINGER_AFTER_TERMINAL = '90 days';

export async function subscriptionWorkflow(input: m.SubscriptionWorkflowInput): Promise<SubscriptionView> {
  let state: SubscriptionState = 'start' in input ? initialState(input.start) : input.resume;
  let projected = 'resume' in input;
  const pendingPayments: m.PaymentNotification[] = 'resume' in input ? [...input.pendingPayments] : [];
  const seen = new Set<string>('resume' in input ? input.seenNotifications : []);

  // Commands run one at a time; the guard runs again inside, against the state it will change.
  const lock = new Mutex();
  /** Set A: the collection in flight, outside the lock, so an outage blocks no other command. */
  let collection: CancellationScope | null = null;
  /** Cancel or void closed the processor's open sessions (again after a restart: it is idempotent). */
  let sessionsClosed = false;

  async function commit(ch: Change): Promise<SubscriptionView> {
    const now = new Date().toISOString();
    // Per-subscription event order (docs/decisions/0118-event-sequence.md): kept in state, so replays and
    // continue-as-new carry it; states from before it existed count on from 0.
    let sequence = state.eventSequence ?? 0;
    const base: SubscriptionState = { ...ch.state, version: state.version + 1, updatedAt: now };
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
      };
    });
    const next: SubscriptionState = { ...base, eventSequence: sequence };
    await recordTransition(next, events);
    if (next.status !== state.status) upsertSearchAttributes([{ key: SubscriptionStatusKey, value: next.status }]);
    state = next;
    return view;
  }

  /** An update: the validator refuses without touching history; the handler re-checks in turn. */
  function command<R, A extends unknown[]>(
    def: UpdateDefinition<R, A>,
    guard: (...args: NoInfer<A>) => void,
    run: (...args: NoInfer<A>) => Promise<R>,
  ): void {
    const handler = (...args: A) =>
      lock.runExclusive(() => {
        guard(...args);
        return run(...args);
      });
    setHandler(def, handler, { validator: (...args: A) => guard(...args) });
  }

  setHandler(m.getSubscription, () => state);
  setHandler(m.paymentNotified, (n) => {
    if (seen.has(n.processorEventId)) return;
    seen.add(n.processorEventId);
    pendingPayments.push(n);
  });

  // Not queued: it only waits for the first projection, which the main body writes.
  const sameRequest = (i: { requestHash: string | null }) => {
    if (i.requestHash !== state.requestHash) throw idempotencyReused();
  };
  const whenProjected = async () => {
    await condition(() => projected);
    return toSubscriptionView(state);
  };
  setHandler(m.created, whenProjected, { validator: sameRequest });
  command(
    m.requestSignature,
    () => guards.requestSignature(state),
    () => commit(transitions.requestSignature(state)),
  );
  command(
    m.signAgreement,
    () => guards.sign(state),
    (i) => commit(transitions.sign(state, i)),
  );
  command(
    m.createSetupSession,
    () => guards.setupSession(state),
    (i) => startSetup(i),
  );
  command(
    m.finalizeSetup,
    () => guards.finalizeSetup(state),
    () => finalizeSetup(),
  );
  command(
    m.submitForReview,
    (i) => guards.submitForReview(state, i),
    (i) => submitForReview(i),
  );
  command(
    m.createCheckoutSession,
    () => guards.checkoutSession(state),
    (i) => startCheckout(i),
  );
  command(
    m.cancel,
    () => guards.cancel(state),
    () => commit(transitions.cancel(state)),
  );
  command(
    m.approve,
    () => guards.approve(state),
    () => commit(transitions.approve(state)),
  );
  command(
    m.reject,
    () => guards.reject(state),
    (i) => commit(transitions.reject(state, i)),
  );
  command(
    m.voidAgreement,
    () => guards.void(state),
    (i) => voidAgreement(i),
  );
  command(
    m.requestInfo,
    () => guards.requestInfo(state),
    (i) => commit(transitions.requestInfo(state, i)),
  );
  command(
    m.issueShares,
    () => guards.issueShares(state),
    () => commit(transitions.issueShares(state, uuid4(), new Date().toISOString())),
  );
  command(
    m.retryCollection,
    () => guards.retryCollection(state),
    () => commit(transitions.retryCollection(state)),
  );
  command(
    m.reconcileFunds,
    (i) => guards.reconcile(state, i.amount),
    () => commit(transitions.fundsInEscrow(state)),
  );

  /** A drawn reference code may already be taken (unique in the projection): draw again. */
  async function submitForReview(i: m.SubmitForReviewInput): Promise<SubscriptionView> {
    for (;;) {
      try {
        return await commit(transitions.submitForReview(state, i, referenceCodeFrom(uuid4())));
      } catch (err) {
        if (!failedWith(err, REFERENCE_CODE_TAKEN)) throw err;
      }
    }
  }

  /** A void stops a collection in flight; money that moved anyway arrives later and is held. */
  async function voidAgreement(i: m.ReasonInput): Promise<SubscriptionView> {
    const view = await commit(transitions.void(state, i));
    collection?.cancel();
    return view;
  }

  async function startSetup(i: m.SessionInput): Promise<m.SessionView> {
    const session = await processor.createSetupSession(sessionRequest(i)).catch(asRefusal);
    await commit({
      state: {
        ...state,
        paymentMethod: i.paymentMethod,
        setupSessionId: session.sessionId,
        paymentMethodLinked: false,
      },
      events: [],
    });
    return { session_id: session.sessionId, session_url: session.sessionUrl };
  }

  async function finalizeSetup(): Promise<SubscriptionView> {
    const result = await processor.getSetupResult(state.setupSessionId!).catch(asRefusal);
    if (result.status !== 'complete') {
      throw refusal(409, 'SETUP_INCOMPLETE', `The payment setup session is ${result.status}; complete it first`);
    }
    return state.paymentMethodLinked ? toSubscriptionView(state) : commit(transitions.linkPaymentMethod(state));
  }

  async function startCheckout(i: m.SessionInput): Promise<m.SessionView> {
    const session = await processor
      .createCheckoutSession({ ...sessionRequest(i), amount: state.totalAmount })
      .catch(asRefusal);
    await commit({
      state: { ...state, paymentMethod: i.paymentMethod, checkoutSessionId: session.sessionId },
      events: [],
    });
    return { session_id: session.sessionId, session_url: session.sessionUrl };
  }

  function sessionRequest(i: m.SessionInput) {
    return {
      subscriptionId: state.id,
      investorId: state.investorId,
      method: i.paymentMethod,
      currency: state.currency,
      successUrl: i.successUrl,
      cancelUrl: i.cancelUrl,
    };
  }

  /** Set A card/ACH: once approved, collect off-session; the outcome arrives as notifications. */
  const needsCollection = () =>
    state.set === 'A' && state.status === 'approved' && state.paymentMethodLinked && state.paymentStatus === 'pending';

  async function collect(locked: boolean): Promise<void> {
    const attempt = state.collectionAttempts ?? 0;
    const request = {
      subscriptionId: state.id,
      setupSessionId: state.setupSessionId!,
      amount: state.totalAmount,
      currency: state.currency,
      idempotencyKey: `collect-${state.id}-${attempt}`,
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
      state.status === 'approved' && state.paymentStatus === 'pending' && (state.collectionAttempts ?? 0) === attempt;
    const record = async () => {
      if (stillOurs()) await commit({ state: { ...state, ...outcome }, events: [] });
    };
    if (locked) await record();
    else await lock.runExclusive(record);
  }

  /** Before the patch the collection held the lock; histories recorded then replay that way. */
  async function collectInBackground(): Promise<void> {
    if (!patched(COLLECT_OUTSIDE_LOCK)) {
      await lock.runExclusive(() => collect(true));
      return;
    }
    const scope = new CancellationScope();
    collection = scope;
    scope
      .run(() => collect(false))
      .catch(() => undefined)
      .finally(() => {
        if (collection === scope) collection = null;
      });
  }

  const needsClosing = () => CLOSES_SESSIONS.includes(state.status) && !sessionsClosed;

  /**
   * In the background, so a processor outage holds up neither commands nor late notifications;
   * given up after a few tries: a payment that gets through anyway is held (applyPayment).
   */
  function closeSessions(): void {
    sessionsClosed = true;
    if (!patched(CLOSE_SESSIONS)) return;
    closer.closeSessions(state.id).catch(() => undefined);
  }

  /** Applies every notification the state is ready for; keeps the rest for after the next change. */
  async function drainPayments(): Promise<boolean> {
    let progressed = false;
    for (let i = 0; i < pendingPayments.length;) {
      const ch = applyPayment(state, pendingPayments[i]!, patched(PAYMENTS_COMPARED));
      if (!ch) {
        i++;
        continue;
      }
      pendingPayments.splice(i, 1);
      if (ch.state !== state || ch.events.length) await commit(ch);
      progressed = true;
    }
    return progressed;
  }
  const readyPayment = () => pendingPayments.some((n) => applyPayment(state, n) !== undefined);

  await lock.runExclusive(async () => {
    if (projected) return;
    await commit({ state, events: [{ type: 'subscription.created' }] });
    projected = true;
  });

  for (;;) {
    const terminal = TERMINAL.includes(state.status);
    const wake = () =>
      readyPayment() ||
      (needsCollection() && !collection) ||
      needsClosing() ||
      workflowInfo().continueAsNewSuggested ||
      TERMINAL.includes(state.status) !== terminal;
    const woke = terminal ? await condition(wake, LINGER_AFTER_TERMINAL) : (await condition(wake), true);
    if (!woke) break; // a terminal subscription left alone for the whole linger period
    if (workflowInfo().continueAsNewSuggested) {
      await condition(() => allHandlersFinished() && !collection);
      return continueAsNew<typeof subscriptionWorkflow>({
        resume: state,
        pendingPayments,
        seenNotifications: [...seen].slice(-500),
      });
    }
    if (needsClosing()) closeSessions();
    if (needsCollection() && !collection) await collectInBackground();
    await lock.runExclusive(() => drainPayments());
  }
  await condition(allHandlersFinished);
  return toSubscriptionView(state);
}
