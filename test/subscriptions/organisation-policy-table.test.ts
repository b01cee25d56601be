import { decideInOrganisation, ORGANISATION_ACTIONS, type OrganisationAction } from '../../domain/policy';
import type { Principal, Role } from '../../domain/principal';

/**
 * Identity decisions and the operator's organisation-wide tools, roles x actions x whose
 * record, against domain/policy.ts, beside the subscription table (policy-table.test.ts).
 */
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
const WHOSE = {
  own: { orgId: ORG, userId: ME },
  colleague: { orgId: ORG, userId: 'user-someone-else' },
  'other org': { orgId: OTHER_ORG, userId: 'user-someone-else' },
  'own id in another org': { orgId: OTHER_ORG, userId: ME },
} as const;
const DECISIONS = { decide_kyc: 'OWN_KYC', decide_accreditation: 'OWN_ACCREDITATION' } as const;

/** The table as docs/decisions/README.md, Trust, second pass says it, not derived from the module. */
function expected(
  roles: Role[],
  action: keyof typeof DECISIONS,
  whose: keyof typeof WHOSE,
): 'allow' | [number, string] {
  const isStaff = roles.includes('staff') || roles.includes('admin');
  const inOrg = WHOSE[whose].orgId === ORG;
  if (!inOrg) return [404, 'NOT_FOUND'];
  if (whose === 'colleague' && !isStaff) return [404, 'NOT_FOUND'];
  if (!isStaff) return [403, 'ROLE_REQUIRED'];
  if (whose === 'own') return [403, DECISIONS[action]];
  return 'allow';
}

const principal = (roles: Role[]): Principal => ({ userId: ME, orgId: ORG, roles, kycCompleted: true });
const asValue = (got: ReturnType<typeof decideInOrganisation>) => (got === 'allow' ? 'allow' : [got.status, got.code]);

const rows = ROLE_SETS.flatMap((roles) =>
  (Object.keys(DECISIONS) as (keyof typeof DECISIONS)[]).flatMap((action) =>
    (Object.keys(WHOSE) as (keyof typeof WHOSE)[]).map(
      (whose) => [roles.join('+') || 'no role', action, whose, roles] as const,
    ),
  ),
);

describe('organisation policy', () => {
  it('covers every action in the table', () => {
    const listed: OrganisationAction[] = [
      ...(Object.keys(DECISIONS) as OrganisationAction[]),
      'redeliver_payment_notifications',
    ];
    expect(listed.sort()).toEqual([...ORGANISATION_ACTIONS].sort());
  });

  it.each(rows)('%s: %s on the record of %s', (_label, action, whose, roles) => {
    expect(asValue(decideInOrganisation(principal([...roles]), action, WHOSE[whose]))).toEqual(
      expected([...roles], action, whose),
    );
  });

  it.each(ROLE_SETS.map((r) => [r.join('+') || 'no role', r] as const))(
    '%s: redelivering payment notifications needs staff or admin, and is confined to the caller’s organisation',
    (_label, roles) => {
      const isStaff = roles.includes('staff') || roles.includes('admin');
      expect(asValue(decideInOrganisation(principal([...roles]), 'redeliver_payment_notifications'))).toEqual(
        isStaff ? 'allow' : [403, 'ROLE_REQUIRED'],
      );
    },
  );
});
