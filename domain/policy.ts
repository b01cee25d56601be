/**
 * Who may do what to which subscription, identity record or organisation tool: the one place that
 * decides it. Every issuance and payment route calls `authorize`, every identity decision and
 * operator tool `authorizeInOrganisation`; route role guards are derived from `rolesFor` and
 * `organisationRoles`, so the two agree. Pure (no I/O): the property test of the state machine
 * runs it next to the workflow's guards.
 */
import { AppError, forbidden, kycRequired, notFound } from '../lib/errors';
import type { Principal, Role } from './principal';

/** Commands the investor gives on their own subscription (spec §4.1). */
const OWNER_ACTIONS = [
  'cancel',
  'request_signature',
  'sign',
  'create_setup_session',
  'finalize_setup',
  'submit_for_review',
  'create_checkout_session',
  'provide_info',
] as const;
/** Compliance and operations (docs/decisions/0009-staff-operations.md). */
const STAFF_ACTIONS = [
  'approve',
  'reject',
  'request_info',
  'issue_shares',
  'retry_collection',
  'reconcile',
  // The sandbox processor's operator console: settle, fail, refund, dispute.
  'operate_payments',
  // End a subscription before review, with a reason (docs/decisions/0369-staff-cancel-before-review.md).
  'staff_cancel',
] as const;
// Refunds send money out of the organisation (docs/decisions/0284-refunds.md): admins only, like void.
const ADMIN_ACTIONS = ['void', 'refund'] as const;

/** @internal exported for its tests */
export const SUBSCRIPTION_ACTIONS = ['create', 'read', ...OWNER_ACTIONS, ...STAFF_ACTIONS, ...ADMIN_ACTIONS] as const;
export type SubscriptionAction = (typeof SUBSCRIPTION_ACTIONS)[number];

/** The parts of a subscription the policy looks at. */
export interface Owned {
  orgId: string;
  investorId: string;
}

const has = (p: Principal, ...roles: Role[]) => roles.some((r) => p.roles.includes(r));
const isOwnerAction = (a: SubscriptionAction): a is (typeof OWNER_ACTIONS)[number] =>
  (OWNER_ACTIONS as readonly string[]).includes(a);
const isStaffAction = (a: SubscriptionAction): a is (typeof STAFF_ACTIONS)[number] =>
  (STAFF_ACTIONS as readonly string[]).includes(a);

/** The roles a route must see in the token before it loads anything (also documents the route). */
export function rolesFor(action: SubscriptionAction): Role[] {
  if (action === 'read') return [];
  if (action === 'create' || isOwnerAction(action)) return ['investor'];
  if (isStaffAction(action)) return ['staff', 'admin'];
  return ['admin'];
}

/** Staff and admins see their organisation's subscriptions; everyone else only their own. */
export function seesWholeOrganisation(p: Principal): boolean {
  return has(p, 'staff', 'admin');
}

function canRead(p: Principal, s: Owned): boolean {
  return s.orgId === p.orgId && (s.investorId === p.userId || seesWholeOrganisation(p));
}

/**
 * Throws the error the caller gets, or returns when the action is allowed. Ownership never comes
 * from a role: investor commands act only on the caller's own subscriptions, whatever else the
 * caller holds. What the caller cannot see is 404, never 403 (docs/decisions/0014-visibility.md).
 */
export function authorize(p: Principal, action: SubscriptionAction, s?: Owned): void {
  const needed = rolesFor(action);
  if (needed.length && !has(p, ...needed)) {
    if (s && !canRead(p, s)) throw notFound('Subscription');
    throw forbidden(`This operation needs the role ${needed.join(' or ')}`, 'ROLE_REQUIRED');
  }
  if (action === 'create') return;
  if (!s || !canRead(p, s)) throw notFound('Subscription');
  if (isOwnerAction(action) && s.investorId !== p.userId) {
    throw forbidden('Only the investor who owns this subscription may do this', 'NOT_SUBSCRIPTION_OWNER');
  }
  // Nobody reviews or funds their own commitment, even holding both roles.
  if ((isStaffAction(action) || (ADMIN_ACTIONS as readonly string[]).includes(action)) && s.investorId === p.userId) {
    throw forbidden('Staff may not act on their own subscription', 'OWN_SUBSCRIPTION');
  }
}

/**
 * Who may approve a subscription, whole: staff or admin of its organisation (rolesFor), never the
 * investor themselves (OWN_SUBSCRIPTION), and only for an investor whose KYC is approved (spec §5.3;
 * the API looks the fact up, the rule is here). Which status it may be approved from is the
 * transition table's (workflows/subscription-transitions.ts, guards.approve).
 */
export function authorizeApproval(p: Principal, s: Owned, investorKycApproved: boolean): void {
  authorize(p, 'approve', s);
  if (!investorKycApproved) throw kycRequired();
}

/**
 * The same decision as a value, for tables and property tests.
 * @internal exported for its tests
 */
export function decide(
  p: Principal,
  action: SubscriptionAction,
  s?: Owned,
): 'allow' | { status: number; code: string } {
  try {
    authorize(p, action, s);
    return 'allow';
  } catch (err) {
    if (err instanceof AppError) return { status: err.status, code: err.code };
    throw err;
  }
}

/**
 * Actions on an organisation's records other than subscriptions
 * (docs/decisions/0192-identity-decisions-go-through-the-policy.md): deciding a person's KYC or
 * accreditation, and the sandbox operator's organisation-wide tools.
 * @internal exported for its tests
 */
export const ORGANISATION_ACTIONS = ['decide_kyc', 'decide_accreditation', 'redeliver_payment_notifications'] as const;
export type OrganisationAction = (typeof ORGANISATION_ACTIONS)[number];

/** The person an identity record is about. */
export interface Subject {
  orgId: string;
  userId: string;
}

/** Decisions about a person: the record's name in a 404, and the refusal for deciding one's own. */
const ABOUT_A_PERSON: Partial<Record<OrganisationAction, { record: string; own: string; noun: string }>> = {
  decide_kyc: { record: 'KYC record', own: 'OWN_KYC', noun: 'KYC' },
  decide_accreditation: { record: 'Accreditation', own: 'OWN_ACCREDITATION', noun: 'accreditation' },
};

export function organisationRoles(_action: OrganisationAction): Role[] {
  return ['staff', 'admin'];
}

/**
 * Throws the error the caller gets, or returns the organisation the action is confined to. A
 * decision about a person needs the record's subject: staff decide within their organisation only
 * (another organisation's record is 404, as if absent), and nobody decides their own KYC or
 * accreditation, whatever roles they hold, as nobody reviews their own subscription.
 */
export function authorizeInOrganisation(
  p: Principal,
  action: OrganisationAction,
  subject?: Subject,
): { orgId: string } {
  const about = ABOUT_A_PERSON[action];
  const needed = organisationRoles(action);
  if (about && !subject) throw new Error(`${action} needs the subject of the record`);
  // What the caller could not even read is 404, never 403 (docs/decisions/0014-visibility.md).
  const hidden = subject && (subject.orgId !== p.orgId || (subject.userId !== p.userId && !has(p, ...needed)));
  if (about && hidden) throw notFound(about.record);
  if (!has(p, ...needed)) throw forbidden(`This operation needs the role ${needed.join(' or ')}`, 'ROLE_REQUIRED');
  if (about && subject!.userId === p.userId)
    throw forbidden(`Nobody may decide their own ${about.noun}, whatever roles they hold`, about.own);
  return { orgId: p.orgId };
}

/**
 * The same decision as a value, for tables.
 * @internal exported for its tests
 */
export function decideInOrganisation(
  p: Principal,
  action: OrganisationAction,
  subject?: Subject,
): 'allow' | { status: number; code: string } {
  try {
    authorizeInOrganisation(p, action, subject);
    return 'allow';
  } catch (err) {
    if (err instanceof AppError) return { status: err.status, code: err.code };
    throw err;
  }
}
