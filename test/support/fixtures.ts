import { randomUUID } from 'node:crypto';
import type { Role } from '../../domain/principal';
import { http } from './http';
import type { TestService } from './service';

export interface Actor {
  userId: string;
  orgId: string;
  token: string;
}

/** An access token for a user of the organisation, signed by the service's own key. */
export async function actor(
  svc: TestService,
  orgId: string,
  roles: Role[],
  opts: { kycCompleted?: boolean; userId?: string } = {},
): Promise<Actor> {
  const userId = opts.userId ?? `user-${randomUUID()}`;
  const token = await svc.tokens.sign({ userId, orgId, roles, kycCompleted: opts.kycCompleted ?? false });
  return { userId, orgId, token };
}

/** Records an approved organisation-scoped KYC verification for the user. */
export async function approveKyc(svc: TestService, a: Actor): Promise<void> {
  await svc.orm.em.getConnection().execute(
    `insert into kyc_verifications (org_id, user_id, status) values (?, ?, 'approved')
       on conflict (org_id, user_id) do update set status = 'approved', updated_at = now()`,
    [a.orgId, a.userId],
  );
}

/** An open offering with one security class, created through the API by staff. */
export async function openOffering(svc: TestService, staff: Actor, price = '12.50', currency = 'USD') {
  const api = http(svc.baseUrl);
  const offering = await api.post('/issuance/offerings', staff.token, { name: 'Series A', currency });
  if (offering.status !== 201) throw new Error(`offering: ${JSON.stringify(offering.body)}`);
  const cls = await api.post(`/issuance/offerings/${offering.body.data.id}/security-classes`, staff.token, {
    name: 'Preferred',
    pricePerUnit: price,
  });
  if (cls.status !== 201) throw new Error(`class: ${JSON.stringify(cls.body)}`);
  return { offeringId: offering.body.data.id as string, securityClassId: cls.body.data.id as string };
}

export const newOrg = () => randomUUID();

/**
 * A console session as a sign-in opens one (docs/decisions/0271-console-sessions-server-side.md):
 * its record, and an access token naming it, for a test that sets the console cookie itself.
 */
export async function consoleToken(svc: TestService, a: Actor, roles: Role[] = ['staff']): Promise<string> {
  const id = randomUUID();
  await svc.orm.em.getConnection().execute(
    `insert into console_sessions (id, org_id, user_id, roles, created_at, expires_at)
       values (?, ?, ?, ?::text[], now(), now() + interval '12 hours')`,
    [id, a.orgId, a.userId, `{${roles.join(',')}}`],
  );
  return svc.tokens.sign({ userId: a.userId, orgId: a.orgId, roles, kycCompleted: false, consoleSession: id });
}
