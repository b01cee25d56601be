import { randomUUID } from 'node:crypto';
import type { Role } from '../../domain/principal';
import type { NewSubscription } from '../../domain/subscription';
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

/** The bodies the issuance API takes to make an offering, a security class and a subscription; any field overridable. */
export const offeringBody = (over: Record<string, unknown> = {}) => ({ name: 'Series A', currency: 'USD', ...over });
export const securityClassBody = (over: Record<string, unknown> = {}) => ({
  name: 'Preferred',
  pricePerUnit: '12.50',
  ...over,
});
export const subscriptionBody = (securityClassId: string, over: Record<string, unknown> = {}) => ({
  securityClassId,
  unitsSubscribed: 5,
  ...over,
});

/** What a subscription workflow starts from (2 units at 10.00 USD, Set A, fresh ids); any field overridable. */
export const newSubscription = (over: Partial<NewSubscription> = {}): NewSubscription => ({
  id: randomUUID(),
  set: 'A',
  orgId: randomUUID(),
  offeringId: randomUUID(),
  securityClassId: randomUUID(),
  trancheId: null,
  investorId: 'investor-1',
  unitsSubscribed: 2,
  pricePerUnit: '10.00',
  totalAmount: '20.00',
  currency: 'USD',
  paymentMethod: null,
  accreditationStatus: null,
  suitabilityConfirmed: null,
  riskAcknowledgmentSigned: null,
  requestHash: null,
  createdAt: new Date().toISOString(),
  ...over,
});

export interface OfferingIds {
  offeringId: string;
  securityClassId: string;
}

/** An offering with one security class, created through the API with a staff token; fails unless both are. */
export async function createOffering(
  api: ReturnType<typeof http>,
  staffToken: string,
  over: { offering?: Record<string, unknown>; securityClass?: Record<string, unknown> } = {},
): Promise<OfferingIds> {
  const offering = await api.post('/issuance/offerings', staffToken, offeringBody(over.offering));
  if (offering.status !== 201) throw new Error(`offering: ${JSON.stringify(offering.body)}`);
  const cls = await api.post(
    `/issuance/offerings/${offering.body.data.id}/security-classes`,
    staffToken,
    securityClassBody(over.securityClass),
  );
  if (cls.status !== 201) throw new Error(`class: ${JSON.stringify(cls.body)}`);
  return { offeringId: offering.body.data.id as string, securityClassId: cls.body.data.id as string };
}

/** Creates a subscription to the offering's class as the investor's token; the answer as it comes. */
export const createSubscription = (
  api: ReturnType<typeof http>,
  investorToken: string,
  offering: OfferingIds,
  over: Record<string, unknown> = {},
  headers?: Record<string, string>,
) =>
  api.post(
    `/issuance/offerings/${offering.offeringId}/subscriptions`,
    investorToken,
    subscriptionBody(offering.securityClassId, over),
    headers,
  );

/** An open offering with one security class, created through the API by staff. */
export const openOffering = (svc: TestService, staff: Actor, price = '12.50', currency = 'USD') =>
  createOffering(http(svc.baseUrl), staff.token, { offering: { currency }, securityClass: { pricePerUnit: price } });

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
