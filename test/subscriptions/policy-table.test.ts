import { decide, SUBSCRIPTION_ACTIONS, type SubscriptionAction } from '../../domain/policy';
import type { Principal, Role } from '../../domain/principal';

/** Access: roles x actions x ownership, the whole table, against domain/policy.ts. */
const ORG = '00000000-0000-4000-8000-0000000000aa';
const OTHER_ORG = '00000000-0000-4000-8000-0000000000bb';
const ME = 'user-me';

const ROLE_SETS: Role[][] = [
  [],
  ['investor'],
  ['staff'],
  ['admin'],
  ['investor', 'staff'],
  ['investor', 'admin'],
  ['staff', 'admin'],
];
const OWNERSHIP = {
  own: { orgId: ORG, investorId: ME },
  colleague: { orgId: ORG, investorId: 'user-someone-else' },
  'other org': { orgId: OTHER_ORG, investorId: ME },
} as const;

const OWNER: SubscriptionAction[] = [
  'cancel',
  'request_signature',
  'sign',
  'create_setup_session',
  'finalize_setup',
  'submit_for_review',
  'create_checkout_session',
  'provide_info',
];
const STAFF: SubscriptionAction[] = [
  'approve',
  'reject',
  'request_info',
  'issue_shares',
  'retry_collection',
  'reconcile',
  'operate_payments',
  'staff_cancel',
];
/** Admins only: voiding an agreement, sending money back. */
const ADMIN: SubscriptionAction[] = ['void', 'refund'];

/**
 * The table written out as the decisions say it (docs/decisions/0052-one-policy.md,
 * docs/decisions/0053-no-self-review.md), not derived from the module.
 */
function expected(
  roles: Role[],
  action: SubscriptionAction,
  whose: keyof typeof OWNERSHIP,
): 'allow' | [number, string] {
  const isStaff = roles.includes('staff') || roles.includes('admin');
  const visible = whose === 'own' || (whose === 'colleague' && isStaff);
  const needs: Role[] =
    action === 'read'
      ? []
      : action === 'create' || OWNER.includes(action)
        ? ['investor']
        : STAFF.includes(action)
          ? ['staff', 'admin']
          : ['admin'];
  if (needs.length && !needs.some((r) => roles.includes(r)))
    return visible ? [403, 'ROLE_REQUIRED'] : [404, 'NOT_FOUND'];
  if (!visible) return [404, 'NOT_FOUND'];
  if (OWNER.includes(action) && whose !== 'own') return [403, 'NOT_SUBSCRIPTION_OWNER'];
  if ((STAFF.includes(action) || ADMIN.includes(action)) && whose === 'own') return [403, 'OWN_SUBSCRIPTION'];
  return 'allow';
}

const rows = ROLE_SETS.flatMap((roles) =>
  SUBSCRIPTION_ACTIONS.filter((a) => a !== 'create').flatMap((action) =>
    (Object.keys(OWNERSHIP) as (keyof typeof OWNERSHIP)[]).map(
      (whose) => [roles.join('+') || 'no role', action, whose, roles] as const,
    ),
  ),
);

describe('subscription policy', () => {
  it('covers every action in the table', () => {
    expect([...OWNER, ...STAFF, ...ADMIN, 'read', 'create'].sort()).toEqual([...SUBSCRIPTION_ACTIONS].sort());
  });

  it.each(rows)('%s: %s on a subscription of %s', (_label, action, whose, roles) => {
    const p: Principal = { userId: ME, orgId: ORG, roles: [...roles], kycCompleted: true };
    const got = decide(p, action, OWNERSHIP[whose]);
    const want = expected([...roles], action, whose);
    expect(got === 'allow' ? 'allow' : [got.status, got.code]).toEqual(want);
  });

  it.each(ROLE_SETS.map((r) => [r.join('+') || 'no role', r] as const))(
    '%s: create needs the investor role',
    (_label, roles) => {
      const got = decide({ userId: ME, orgId: ORG, roles: [...roles], kycCompleted: true }, 'create');
      expect(got === 'allow').toBe(roles.includes('investor'));
    },
  );
});
