import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { ApplicationFailure } from '@temporalio/common';
import { holdCommitment, releaseCommitment } from '../../db/offering-capacity';
import { migrate, openOrm, type Orm } from '../../db/orm';
import { formatAmount, parseAmount } from '../../lib/money';
import { freshDatabase } from '../support/service';
import { AppError } from '../../lib/errors';
import { authorize, type SubscriptionAction } from '../../domain/policy';
import type { Principal, Role } from '../../domain/principal';
import type { PaymentStatus, SubscriptionState, SubscriptionStatus } from '../../domain/subscription';
import { applyPayment } from '../../workflows/subscription-payments';
import { guards, transitions } from '../../workflows/subscription-transitions';
import type { PaymentNotification } from '../../domain/subscription-messages';
import { countedAmount, moneyTotals } from '../../domain/receipts';
import { planRefund, refundedByStaff } from '../../workflows/subscription-refunds';

/**
 * Proof: command sequences across roles and both sets, run through the policy and the
 * workflow's own guards and transitions, checked step by step against a reference model written
 * from spec §3 (and the choices of docs/decisions/README.md, Subscriptions, where §3 says "not shown").
 */

// ---- The reference model: spec §3, row by row ----------------------------------------------

type Actor = 'owner' | 'other investor' | 'staff' | 'admin' | 'investor+staff (not owner)' | 'owner+staff';
type Command =
  | 'request-signature'
  | 'sign'
  | 'cancel'
  | 'link-card'
  | 'submit-card'
  | 'submit-wire'
  | 'checkout'
  | 'approve'
  | 'reject'
  | 'request-info'
  | 'provide-info'
  | 'void'
  | 'issue-shares'
  | 'reconcile'
  | 'processor: succeeded'
  | 'processor: succeeded again'
  | 'processor: second payment'
  | 'processor: wrong amount'
  | 'processor: failed'
  | 'processor: in_escrow';

/**
 * The payments a run may see. The investor's payment, told once or twice (a new event id,
 * the same payment); another payment of the total; a payment of another amount.
 */
type Payment = 'pay-1' | 'pay-2' | 'pay-3';
const PAYMENT_OF: Partial<Record<Command, Payment>> = {
  'processor: succeeded': 'pay-1',
  'processor: succeeded again': 'pay-1',
  'processor: second payment': 'pay-2',
  'processor: wrong amount': 'pay-3',
  'processor: failed': 'pay-1',
  'processor: in_escrow': 'pay-1',
};
const KIND_OF: Partial<Record<Command, PaymentNotification['kind']>> = {
  'processor: failed': 'failed',
  'processor: in_escrow': 'in_escrow',
};

interface Model {
  set: 'A' | 'B';
  status: SubscriptionStatus;
  payment: PaymentStatus;
  linked: boolean;
  method: 'wire' | null;
  /** The payment that paid the total, when a notification named it. */
  paidWith: Payment | null;
  /** Payments held aside (a second payment, a wrong amount), and every payment.held event raised. */
  heldAside: Payment[];
  heldEvents: number;
  /** Information requests (decision 0277): one open, how many asked, how many answered. */
  infoOpen: boolean;
  asked: number;
  answered: number;
}
type Outcome = { refused: 'access' | 'state' } | { refused: false; next: Model };

const OWNER_COMMANDS: Command[] = [
  'request-signature',
  'sign',
  'cancel',
  'link-card',
  'submit-card',
  'submit-wire',
  'checkout',
  'provide-info',
];
const STAFF_COMMANDS: Command[] = ['approve', 'reject', 'request-info', 'issue-shares', 'reconcile'];
const ROLES: Record<Actor, { roles: Role[]; owns: boolean }> = {
  owner: { roles: ['investor'], owns: true },
  'other investor': { roles: ['investor'], owns: false },
  staff: { roles: ['staff'], owns: false },
  admin: { roles: ['admin'], owns: false },
  'investor+staff (not owner)': { roles: ['investor', 'staff'], owns: false },
  'owner+staff': { roles: ['investor', 'staff'], owns: true },
};
const CAPTURED: PaymentStatus[] = ['received', 'in_escrow', 'refunded', 'disputed'];
const ENDED_UNFULFILLED: SubscriptionStatus[] = ['cancelled', 'voided', 'rejected'];

/** Who may: the investor on their own; staff (or admin) on others'; only an admin voids. */
function access(cmd: Command, actor: Actor): boolean {
  const { roles, owns } = ROLES[actor];
  if (cmd.startsWith('processor:')) return true;
  if (OWNER_COMMANDS.includes(cmd)) return owns && roles.includes('investor');
  if (STAFF_COMMANDS.includes(cmd)) return !owns && (roles.includes('staff') || roles.includes('admin'));
  return !owns && roles.includes('admin'); // void
}

function model(m: Model, cmd: Command, actor: Actor): Outcome {
  if (!access(cmd, actor)) return { refused: 'access' };
  const to = (patch: Partial<Model>): Outcome => ({ refused: false, next: { ...m, ...patch } });
  const state: Outcome = { refused: 'state' };
  const is = (...s: SubscriptionStatus[]) => s.includes(m.status);
  switch (cmd) {
    case 'request-signature':
      return is('draft') ? to({ status: 'pending_signature' }) : state;
    case 'sign':
      return is('draft', 'pending_signature') ? to({ status: 'pending_payment' }) : state;
    case 'cancel':
      return is('draft', 'pending_signature', 'pending_payment') ? to({ status: 'cancelled' }) : state;
    case 'link-card':
      return m.set === 'A' && is('pending_payment') ? to({ linked: true }) : state;
    case 'submit-card':
      return m.set === 'A' && is('pending_payment') && m.linked ? to({ status: 'pending_review' }) : state;
    // Wire releases a linked card: approval then collects nothing.
    case 'submit-wire':
      return m.set === 'A' && is('pending_payment')
        ? to({ status: 'pending_review', linked: false, method: 'wire' })
        : state;
    case 'checkout':
      return m.set === 'B' && is('pending_payment') && !['processing', 'received'].includes(m.payment) ? to({}) : state;
    case 'approve':
      return is('pending_review') ? to({ status: 'approved' }) : state;
    case 'reject':
      return is('pending_review') ? to({ status: 'rejected' }) : state;
    case 'request-info':
      return is('pending_review') ? to({ infoOpen: true, asked: m.asked + 1 }) : state;
    // docs/decisions/0277-answering-an-information-request.md: only an open request, only in review.
    case 'provide-info':
      return m.infoOpen && is('pending_review') ? to({ infoOpen: false, answered: m.answered + 1 }) : state;
    case 'void':
      return is('pending_payment', 'pending_review', 'approved') ? to({ status: 'voided' }) : state;
    case 'issue-shares':
      return m.set === 'B' && is('approved') ? to({ status: 'completed' }) : state;
    case 'reconcile':
      return m.set === 'A' && is('approved') && m.method === 'wire'
        ? to({ status: 'completed', payment: 'in_escrow' })
        : state;
    case 'processor: succeeded':
    case 'processor: succeeded again':
    case 'processor: second payment':
    case 'processor: wrong amount': {
      const pay = PAYMENT_OF[cmd]!;
      const ended = ENDED_UNFULFILLED.includes(m.status);
      const waits = !ended && !is('completed') && (m.set === 'B' ? is('draft', 'pending_signature') : !is('approved'));
      if (waits) return to({}); // kept for later
      const holdAside = () => to({ heldAside: [...m.heldAside, pay], heldEvents: m.heldEvents + 1 });
      if (m.heldAside.includes(pay)) return to({});
      if (CAPTURED.includes(m.payment)) return !m.paidWith || m.paidWith === pay ? to({}) : holdAside();
      // Money for a subscription that ended unfulfilled: received and held, with an event.
      if (ended) return to({ payment: 'received', paidWith: pay, heldEvents: m.heldEvents + 1 });
      if (cmd === 'processor: wrong amount') return holdAside();
      if (m.set === 'B' && is('pending_payment'))
        return to({ status: 'pending_review', payment: 'received', paidWith: pay });
      if (m.set === 'A' && !is('approved')) return to({});
      return to({ payment: 'received', paidWith: pay });
    }
    case 'processor: failed':
      return to({ payment: CAPTURED.includes(m.payment) ? m.payment : 'failed' });
    case 'processor: in_escrow':
      if (m.set === 'B' || m.payment === 'refunded' || m.payment === 'disputed') return to({});
      if (ENDED_UNFULFILLED.includes(m.status))
        return CAPTURED.includes(m.payment)
          ? to({})
          : to({ payment: 'received', paidWith: 'pay-1', heldEvents: m.heldEvents + 1 });
      return is('approved') ? to({ status: 'completed', payment: 'in_escrow' }) : to({});
  }
}

// ---- The implementation: the policy, then the workflow's guard and transition ---------------

const ACTION: Record<Exclude<Command, `processor: ${string}`>, SubscriptionAction> = {
  'request-signature': 'request_signature',
  sign: 'sign',
  cancel: 'cancel',
  'link-card': 'create_setup_session',
  'submit-card': 'submit_for_review',
  'submit-wire': 'submit_for_review',
  checkout: 'create_checkout_session',
  approve: 'approve',
  reject: 'reject',
  'request-info': 'request_info',
  'provide-info': 'provide_info',
  void: 'void',
  'issue-shares': 'issue_shares',
  reconcile: 'reconcile',
};
const OWNER_ID = 'owner-1';
const ORG = '00000000-0000-4000-8000-000000000001';
const reason = { reason: 'because', actorId: 'staff-1' };

function principal(actor: Actor): Principal {
  const { roles, owns } = ROLES[actor];
  return { userId: owns ? OWNER_ID : `user-${actor}`, orgId: ORG, roles, kycCompleted: true };
}

/** A run's currency and what its total, and a wrong amount, are written as (20 units of it). */
const CURRENCIES = {
  JPY: { total: '20', same: '20', wrong: '21' },
  USD: { total: '20.00', same: '20.0', wrong: '20.01' },
  BHD: { total: '20.000', same: '20', wrong: '20.001' },
} as const;
type Currency = keyof typeof CURRENCIES;

let eventSeq = 0;
function notification(cmd: Command, currency: Currency): PaymentNotification {
  const amounts = CURRENCIES[currency];
  const amount =
    cmd === 'processor: wrong amount'
      ? amounts.wrong
      : cmd === 'processor: succeeded again'
        ? amounts.same
        : amounts.total;
  return {
    kind: KIND_OF[cmd] ?? 'succeeded',
    processorEventId: `evt-${eventSeq++}`,
    reference: `session-of-${PAYMENT_OF[cmd]}`,
    payment: PAYMENT_OF[cmd]!,
    amount,
  };
}

function implementation(
  s: SubscriptionState,
  cmd: Command,
  actor: Actor,
): { refused: 'access' | 'state' } | { refused: false; next: SubscriptionState; held?: number } {
  if (cmd.startsWith('processor:')) {
    const ch = applyPayment(s, notification(cmd, s.currency as Currency));
    const held = ch ? ch.events.filter((e) => e.type === 'payment.held').length : 0;
    return { refused: false, next: ch ? ch.state : s, held };
  }
  try {
    authorize(principal(actor), ACTION[cmd as keyof typeof ACTION], s);
  } catch (err) {
    if (err instanceof AppError) return { refused: 'access' };
    throw err;
  }
  try {
    return { refused: false, next: run(s, cmd) };
  } catch (err) {
    if (err instanceof ApplicationFailure) return { refused: 'state' };
    throw err;
  }
}

function run(s: SubscriptionState, cmd: Command): SubscriptionState {
  switch (cmd) {
    case 'request-signature':
      guards.requestSignature(s);
      return transitions.requestSignature(s).state;
    case 'sign':
      guards.sign(s);
      return transitions.sign(s, { signature: 'A', signedAt: '2026-11-23T00:00:00Z', ipAddress: null }).state;
    case 'cancel':
      guards.cancel(s);
      return transitions.cancel(s).state;
    case 'link-card': {
      guards.setupSession(s);
      const opened = { ...s, setupSessionId: 'seti_1', paymentMethodLinked: false };
      guards.finalizeSetup(opened);
      return transitions.linkPaymentMethod(opened).state;
    }
    case 'submit-card':
      guards.submitForReview(s, {});
      return transitions.submitForReview(s, {}, 'TRN-AAAA-BBBB-CCC').state;
    case 'submit-wire':
      guards.submitForReview(s, { paymentMethod: 'wire' });
      return transitions.submitForReview(s, { paymentMethod: 'wire' }, 'TRN-AAAA-BBBB-CCC').state;
    case 'checkout':
      guards.checkoutSession(s);
      return { ...s, checkoutSessionId: 'cs_1' };
    case 'approve':
      guards.approve(s);
      return transitions.approve(s).state;
    case 'reject':
      guards.reject(s);
      return transitions.reject(s, reason).state;
    case 'request-info':
      guards.requestInfo(s);
      return transitions.requestInfo(s, reason, '2026-11-23T00:00:00Z').state;
    case 'provide-info':
      guards.provideInfo(s);
      return transitions.provideInfo(
        s,
        { message: 'here it is', documentReferences: ['doc-1'], actorId: OWNER_ID },
        '2026-11-23T00:00:00Z',
      ).state;
    case 'void':
      guards.void(s);
      return transitions.void(s, reason).state;
    case 'issue-shares':
      guards.issueShares(s);
      return transitions.issueShares(s, 'shares-1', '2026-11-23T00:00:00Z').state;
    case 'reconcile':
      guards.reconcile(s, s.totalAmount);
      return transitions.reconcile(s).state;
    default:
      throw new Error(`not a command: ${cmd}`);
  }
}

function initial(set: 'A' | 'B', currency: Currency = 'USD'): SubscriptionState {
  return {
    id: 'sub-1',
    set,
    orgId: ORG,
    offeringId: 'off-1',
    securityClassId: 'cls-1',
    trancheId: null,
    investorId: OWNER_ID,
    unitsSubscribed: 2,
    pricePerUnit: '10',
    totalAmount: CURRENCIES[currency].total,
    currency,
    paymentMethod: null,
    paymentStatus: 'pending',
    status: 'draft',
    accreditationStatus: null,
    suitabilityConfirmed: null,
    riskAcknowledgmentSigned: null,
    agreementSigned: false,
    signature: null,
    signedAt: null,
    signerIp: null,
    setupSessionId: null,
    paymentMethodLinked: false,
    collectionAttempts: 0,
    checkoutSessionId: null,
    referenceCode: null,
    sharesId: null,
    sharesIssuedAt: null,
    statusReason: null,
    infoRequested: null,
    createdAt: '2026-11-23T00:00:00Z',
    updatedAt: '2026-11-23T00:00:00Z',
    requestHash: null,
    version: 0,
  };
}

const COMMANDS: Command[] = [
  ...OWNER_COMMANDS,
  ...STAFF_COMMANDS,
  'void',
  'processor: succeeded',
  'processor: succeeded again',
  'processor: second payment',
  'processor: wrong amount',
  'processor: failed',
  'processor: in_escrow',
];
const ACTORS = Object.keys(ROLES) as Actor[];
// Biased toward the happy path so long sequences reach approval and completion, not only refusals.
type Step = { cmd: Command; actor: Actor };
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ cmd: fc.constantFrom(...COMMANDS), actor: fc.constantFrom(...ACTORS) }) },
  { weight: 2, arbitrary: fc.record({ cmd: fc.constantFrom(...OWNER_COMMANDS), actor: fc.constant<Actor>('owner') }) },
  {
    weight: 2,
    arbitrary: fc.record({
      cmd: fc.constantFrom<Command>(...STAFF_COMMANDS, 'void'),
      actor: fc.constantFrom<Actor>('staff', 'admin'),
    }),
  },
);

const by = (actor: Actor, ...cmds: Command[]): Step[] => cmds.map((cmd) => ({ cmd, actor }));
/** The paths of spec §3 to completion; a run follows a prefix of one, with random steps around it. */
const HAPPY: Record<'A' | 'B', Step[][]> = {
  A: [
    [
      ...by('owner', 'request-signature', 'sign', 'link-card', 'submit-card'),
      ...by('staff', 'approve'),
      ...by('owner', 'processor: succeeded', 'processor: in_escrow'),
    ],
    [...by('owner', 'sign', 'submit-wire'), ...by('admin', 'approve', 'reconcile')],
  ],
  B: [[...by('owner', 'sign', 'checkout', 'processor: succeeded'), ...by('staff', 'approve', 'issue-shares')]],
};
const runs = fc
  .constantFrom<'A' | 'B'>('A', 'B')
  .chain((set) =>
    fc
      .tuple(
        fc.array(step, { maxLength: 4 }),
        fc.constantFrom(...HAPPY[set]),
        fc.nat({ max: 8 }),
        fc.array(step, { maxLength: 20 }),
      )
      .chain(([before, path, n, after]) =>
        fc
          .constantFrom<Currency>('JPY', 'USD', 'BHD')
          .map((currency) => ({ set, currency, steps: [...before, ...path.slice(0, n), ...after] })),
      ),
  );

describe('the subscription state machine against the spec §3 model', () => {
  it('agrees on every step of generated command sequences, across roles, both sets, currencies and payments', () => {
    fc.assert(
      fc.property(runs, ({ set, currency, steps }) => {
        let m: Model = {
          set,
          status: 'draft',
          payment: 'pending',
          linked: false,
          method: null,
          paidWith: null,
          heldAside: [],
          heldEvents: 0,
          infoOpen: false,
          asked: 0,
          answered: 0,
        };
        let s = initial(set, currency);
        let heldEvents = 0;
        for (const { cmd, actor } of steps) {
          const want = model(m, cmd, actor);
          const got = implementation(s, cmd, actor);
          expect({ cmd, actor, from: m.status, refused: got.refused }).toEqual({
            cmd,
            actor,
            from: m.status,
            refused: want.refused,
          });
          if (want.refused === false && got.refused === false) {
            m = want.next;
            s = got.next;
            heldEvents += got.held ?? 0;
            expect({
              cmd,
              status: s.status,
              payment: s.paymentStatus,
              linked: s.paymentMethodLinked,
              paidWith: s.paidWith ?? null,
              heldEvents,
              infoOpen: s.infoRequested !== null,
              asked: (s.infoExchanges ?? []).length,
              answered: (s.infoExchanges ?? []).filter((x) => x.answer !== null).length,
            }).toEqual({
              cmd,
              status: m.status,
              payment: m.payment,
              linked: m.linked,
              paidWith: m.paidWith,
              heldEvents: m.heldEvents,
              infoOpen: m.infoOpen,
              asked: m.asked,
              answered: m.answered,
            });
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('reaches every status of §2.2 in some generated run (the generator is not stuck at draft)', () => {
    const reached = new Set<string>();
    fc.assert(
      fc.property(runs, ({ set, currency, steps }) => {
        let s = initial(set, currency);
        for (const { cmd, actor } of steps) {
          const got = implementation(s, cmd, actor);
          if (got.refused === false) s = got.next;
          reached.add(s.status);
        }
      }),
      { numRuns: 500 },
    );
    expect([...reached].sort()).toEqual([
      'approved',
      'cancelled',
      'completed',
      'draft',
      'pending_payment',
      'pending_review',
      'pending_signature',
      'rejected',
      'voided',
    ]);
  });
});

/**
 * Full offerings (docs/decisions/0278-offering-capacity-reservations.md), against real PostgreSQL:
 * rounds of creates and releases run in parallel against one capped offering. No offering is ever
 * oversold, the counter is always the sum of the commitments still held, and nothing that fits is
 * refused.
 */
describe('offering capacity under generated rounds of parallel creates and releases', () => {
  let orm: Orm;
  beforeAll(async () => {
    orm = await openOrm({ DATABASE_URL: await freshDatabase(), DATABASE_POOL_MAX: 12 });
    await migrate(orm);
  });
  afterAll(() => orm?.close());
  const knex = () => orm.em.getConnection().getKnex();

  type Op = { create: number } | { release: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ create: fc.integer({ min: 1, max: 4000 }) }) },
    { weight: 1, arbitrary: fc.record({ release: fc.nat({ max: 30 }) }) },
  );
  const plans = fc.record({
    maxCents: fc.integer({ min: 1, max: 10_000 }),
    classMaxCents: fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: null }),
    rounds: fc.array(fc.array(op, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 5 }),
  });
  const usd = (cents: number | bigint) => formatAmount(BigInt(cents), 'USD');

  it('never oversells an offering or a class, and keeps the counters equal to what is held', async () => {
    await fc.assert(
      fc.asyncProperty(plans, async ({ maxCents, classMaxCents, rounds }) => {
        const offeringId = randomUUID();
        const securityClassId = randomUUID();
        const now = new Date();
        await knex()('offerings').insert({
          id: offeringId,
          org_id: randomUUID(),
          name: 'property',
          currency: 'USD',
          status: 'open',
          max_amount: usd(maxCents),
          created_at: now,
          updated_at: now,
        });
        await knex()('security_classes').insert({
          id: securityClassId,
          offering_id: offeringId,
          name: 'common',
          price_per_unit: '1.00',
          max_amount: classMaxCents === null ? null : usd(classMaxCents),
          created_at: now,
        });
        const held: { id: string; cents: number }[] = [];
        const cap = Math.min(maxCents, classMaxCents ?? Infinity);
        for (const round of rounds) {
          const before = held.reduce((sum, h) => sum + h.cents, 0);
          const releasing = new Set<string>();
          const results = await Promise.all(
            round.map(async (o) => {
              if ('release' in o) {
                const h = held[o.release % Math.max(held.length, 1)];
                if (!h || releasing.has(h.id)) return null;
                releasing.add(h.id);
                await releaseCommitment(knex(), h.id);
                return { released: h as { id: string; cents: number } };
              }
              const id = randomUUID();
              const c = {
                subscriptionId: id,
                offeringId,
                securityClassId,
                investorId: 'investor-1',
                amount: usd(o.create),
              };
              const refused = await holdCommitment(knex(), c);
              return { created: { id, cents: o.create }, refused: refused !== null };
            }),
          );
          const creates = results.filter((r) => r && 'created' in r) as {
            created: { id: string; cents: number };
            refused: boolean;
          }[];
          for (const r of results) if (r && 'released' in r && r.released) held.splice(held.indexOf(r.released), 1);
          for (const r of creates) if (!r.refused) held.push(r.created);
          const holding = held.reduce((sum, h) => sum + h.cents, 0);
          // Nothing that fits alongside everything else in the round is refused.
          const asked = creates.reduce((sum, r) => sum + r.created.cents, 0);
          if (before + asked <= cap) expect(creates.filter((r) => r.refused)).toEqual([]);
          const [o] = await knex()('offerings').where({ id: offeringId }).select('committed_amount');
          const [k] = await knex()('security_classes').where({ id: securityClassId }).select('committed_amount');
          const [sum] = await knex()('offering_commitments')
            .where({ offering_id: offeringId })
            .whereNull('released_at')
            .select(knex().raw('coalesce(sum(amount), 0)::numeric(39,2)::text as total'));
          expect({
            offering: usd(parseAmount(String(o.committed_amount), 'USD', 'total')),
            cls: usd(parseAmount(String(k.committed_amount), 'USD', 'total')),
          }).toEqual({
            offering: usd(holding),
            cls: usd(holding),
          });
          expect(sum.total).toBe(usd(holding));
          expect(holding).toBeLessThanOrEqual(cap);
        }
      }),
      // Each run is real transactions: report the first counterexample as found rather than shrink it for minutes.
      { numRuns: 40, endOnFailure: true },
    );
  }, 120_000);
});

// ---- Refunds and dispute outcomes (docs/decisions/0284-refunds.md, 0285, 0287) ---------------

type MoneyStep =
  | { cmd: Command; actor: Actor }
  | { cmd: 'refund'; amount?: string }
  | { cmd: 'processor: refunded'; payment: Payment; cumulative: string }
  | { cmd: 'processor: dispute' | 'processor: dispute won' | 'processor: dispute lost'; payment: Payment };

const cents = (text: string) => BigInt(Math.round(Number(text) * 100)); // test amounts are at most "20.00"
const usd = (c: bigint) => `${c / 100n}.${(c % 100n).toString().padStart(2, '0')}`;

const moneyStep: fc.Arbitrary<MoneyStep> = fc.oneof(
  { weight: 4, arbitrary: step },
  {
    weight: 2,
    arbitrary: fc
      .option(fc.integer({ min: 1, max: 2100 }), { nil: undefined })
      .map((c) => ({ cmd: 'refund' as const, amount: c === undefined ? undefined : usd(BigInt(c)) })),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      cmd: fc.constant('processor: refunded' as const),
      payment: fc.constantFrom<Payment>('pay-1', 'pay-2'),
      cumulative: fc.integer({ min: 1, max: 2000 }).map((c) => usd(BigInt(c))),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      cmd: fc.constantFrom(
        'processor: dispute' as const,
        'processor: dispute won' as const,
        'processor: dispute lost' as const,
      ),
      payment: fc.constantFrom<Payment>('pay-1', 'pay-2'),
    }),
  },
);
const moneyRuns = fc
  .constantFrom<'A' | 'B'>('A', 'B')
  .chain((set) =>
    fc
      .tuple(fc.constantFrom(...HAPPY[set]), fc.array(moneyStep, { maxLength: 25 }))
      .map(([path, after]) => ({ set, steps: [...(path as MoneyStep[]), ...after] })),
  );

/** One step through the workflow's own code: staff refunds as the workflow plans and records them. */
function moneyStepRun(s: SubscriptionState, st: MoneyStep): SubscriptionState {
  if (st.cmd === 'refund') {
    let slices;
    try {
      slices = planRefund(s, { amount: st.amount });
    } catch (err) {
      if (err instanceof ApplicationFailure) return s;
      throw err;
    }
    const before = cents(moneyTotals(s)!.refunded);
    const next = refundedByStaff(
      s,
      slices.map((x, k) => ({ ...x, refundId: `re_${k}` })),
      { amount: st.amount, reason: 'r', actorId: 'admin-1' },
    ).state;
    // A refund takes exactly what was asked (or everything refundable), never more than is left.
    const after = cents(moneyTotals(next)!.refunded);
    if (st.amount !== undefined) expect(after - before).toBe(cents(st.amount));
    return next;
  }
  if ('payment' in st) {
    const kind =
      st.cmd === 'processor: refunded'
        ? 'refunded'
        : st.cmd === 'processor: dispute'
          ? 'disputed'
          : st.cmd === 'processor: dispute won'
            ? 'dispute_won'
            : 'dispute_lost';
    const n: PaymentNotification = {
      kind,
      processorEventId: `evt-${eventSeq++}`,
      reference: `session-of-${st.payment}`,
      payment: st.payment,
      amount: st.cmd === 'processor: refunded' ? st.cumulative : null,
    };
    return applyPayment(s, n)?.state ?? s;
  }
  const got = implementation(s, st.cmd, st.actor);
  return got.refused === false ? got.next : s;
}

describe('refunds and dispute outcomes in generated command sequences', () => {
  it('keeps money received minus refunded equal to what the counters hold, and never refunds more than was taken', () => {
    fc.assert(
      fc.property(moneyRuns, ({ set, steps }) => {
        let s = initial(set, 'USD');
        // The offering's counters as the projection keeps them (activities/subscription-projection.ts).
        let credit: bigint | null = null;
        for (const st of steps) {
          s = moneyStepRun(s, st);
          if (set === 'A' && s.status === 'completed' && s.paymentStatus === 'in_escrow' && credit === null)
            credit = cents(s.totalAmount);
          if (credit !== null && s.status === 'completed') credit = cents(countedAmount(s));
          const receipts = s.receipts ?? [];
          for (const r of receipts) {
            expect(cents(r.refunded)).toBeGreaterThanOrEqual(0n);
            expect(cents(r.refunded)).toBeLessThanOrEqual(cents(r.amount));
          }
          const own = receipts.filter((r) => !r.held);
          if (credit !== null) {
            // Received minus refunded, of the subscription's own money (a wire has no receipt: its total).
            const received = own.length ? own.reduce((a, r) => a + cents(r.amount), 0n) : cents(s.totalAmount);
            const refunded = own.reduce((a, r) => a + cents(r.refunded), 0n);
            const expected = own.length || s.paymentStatus !== 'refunded' ? received - refunded : 0n;
            expect({ credit, status: s.paymentStatus }).toEqual({ credit: expected, status: s.paymentStatus });
            expect(credit).toBeGreaterThanOrEqual(0n);
          }
          // A full refund of the subscription's own payment is `refunded`; a partial one is not.
          for (const r of own) {
            if (cents(r.refunded) === cents(r.amount) && !r.disputed) expect(s.paymentStatus).toBe('refunded');
            if (cents(r.refunded) < cents(r.amount) && s.paymentStatus === 'refunded') expect(r.disputed).toBe(true);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
