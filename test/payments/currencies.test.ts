import {
  actor,
  approveKyc,
  newOrg,
  offeringBody,
  openOffering,
  securityClassBody,
  type Actor,
} from '../support/fixtures';
import { http } from '../support/http';
import { startService, type TestService } from '../support/service';
import { reaches, openCheckout, RETURN_URLS, signedSubscription, world, type World } from './payment-helpers';
import { recordingProxy } from './recording-proxy';
import { sendStripeEvent, stripeEnv } from './stripe-helpers';
import { startStripeMock } from './stripe-mock';

/**
 * Money in every currency (docs/decisions/0186-currency-minor-units.md): ISO 4217's minor unit decides what a
 * price may say, what a total comes to and what reaches the processor. JPY has no minor unit, USD two places,
 * BHD three.
 */

/** 2 units at each price: the total, and what Stripe is sent for it. */
const CASES = [
  { currency: 'JPY', price: '1000', total: '2000', stripe: 2000 },
  { currency: 'USD', price: '12.50', total: '25.00', stripe: 2500 },
  { currency: 'BHD', price: '12.345', total: '24.690', stripe: 24690 },
] as const;

/** World with the offering in another currency. */
async function worldIn(svc: TestService, currency: string, price: string): Promise<World> {
  const base = await world(svc);
  return { ...base, offering: await openOffering(svc, base.staff, price, currency) };
}

describe('prices and totals in the currency of the offering', () => {
  let svc: TestService;
  let staff: Actor;
  let investor: Actor;
  const api = () => http(svc.baseUrl);

  beforeAll(async () => {
    svc = await startService({ set: 'B' });
    const org = newOrg();
    staff = await actor(svc, org, ['staff']);
    investor = await actor(svc, org, ['investor'], { kycCompleted: true });
    await approveKyc(svc, investor);
  }, 120_000);
  afterAll(() => svc?.stop());

  async function offeringIn(currency: string) {
    const res = await api().post(
      '/issuance/offerings',
      staff.token,
      offeringBody({ name: `Fund ${currency}`, currency }),
    );
    return res;
  }
  const addClass = (offeringId: string, pricePerUnit: string) =>
    api().post(
      `/issuance/offerings/${offeringId}/security-classes`,
      staff.token,
      securityClassBody({ name: 'Common', pricePerUnit }),
    );

  it('refuses a price more precise than the currency, and writes each price in its currency', async () => {
    const yen = (await offeringIn('JPY')).body.data.id as string;
    const refused = await addClass(yen, '1000.50');
    expect([refused.status, refused.body.error?.code]).toEqual([422, 'VALIDATION_FAILED']);
    expect(refused.body.error.details).toEqual([
      expect.objectContaining({ path: 'pricePerUnit', message: expect.stringMatching(/JPY amounts have no decimals/) }),
    ]);
    expect((await addClass(yen, '1000.00')).body.data?.price_per_unit).toBe('1000');

    const dinar = (await offeringIn('BHD')).body.data.id as string;
    expect((await addClass(dinar, '12.3456')).status).toBe(422);
    expect((await addClass(dinar, '12.5')).body.data?.price_per_unit).toBe('12.500');
    const dollar = (await offeringIn('USD')).body.data.id as string;
    expect((await addClass(dollar, '12.345')).status).toBe(422);
    expect((await addClass(dollar, '12.5')).body.data?.price_per_unit).toBe('12.50');
    const read = await api().get(`/issuance/offerings/${dinar}`, staff.token);
    expect(read.body.data.security_classes.map((c: { price_per_unit: string }) => c.price_per_unit)).toEqual([
      '12.500',
    ]);
  });

  it('refuses a currency that is not ISO 4217, or not one investors pay in', async () => {
    for (const currency of ['XYZ', 'XAU', 'usd']) {
      const res = await offeringIn(currency);
      expect([currency, res.status, res.body.error?.details?.[0]?.path]).toEqual([currency, 422, 'currency']);
    }
  });

  it('refuses a subscription whose total comes to less than the smallest amount of its currency', async () => {
    for (const [currency, price] of [
      ['USD', '0.01'],
      ['JPY', '1'],
    ] as const) {
      const offering = await openOffering(svc, staff, price, currency);
      const res = await api().post(`/issuance/offerings/${offering.offeringId}/subscriptions`, investor.token, {
        securityClassId: offering.securityClassId,
        unitsSubscribed: 0.4,
      });
      expect([currency, res.status, res.body.error?.code]).toEqual([currency, 422, 'AMOUNT_TOO_SMALL']);
    }
  });

  it.each(CASES)('computes the total in $currency, and the sandbox checkout charges it', async (c) => {
    const w = await worldIn(svc, c.currency, c.price);
    const id = await signedSubscription(w, 2);
    const sub = await w.api.get(`/issuance/subscriptions/${id}`, w.investor.token);
    expect([sub.body.data.total_amount, sub.body.data.price_per_unit]).toEqual([c.total, c.price]);
    const session = await openCheckout(w, id);
    const page = await fetch(session.session_url, { signal: AbortSignal.timeout(30_000) });
    expect(await page.text()).toContain(`${c.total} ${c.currency}`);
    const paid = await fetch(`${session.session_url}/complete`, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect(paid.status).toBe(303);
    await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
  });
});

describe('amounts sent to Stripe, in each currency', () => {
  let mock: Awaited<ReturnType<typeof startStripeMock>>;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let setB: TestService;
  let setA: TestService;

  beforeAll(async () => {
    mock = await startStripeMock();
    proxy = await recordingProxy(mock.url);
    [setB, setA] = await Promise.all([
      startService({ set: 'B', env: stripeEnv(proxy.url) }),
      startService({ set: 'A', env: stripeEnv(proxy.url) }),
    ]);
  }, 600_000);
  afterAll(async () => {
    await Promise.all([setB?.stop(), setA?.stop()]);
    await proxy?.close();
    await mock?.stop();
  });

  it.each(CASES)(
    'Set B: the checkout line is $stripe minor units for $total $currency, and its payment is taken',
    async (c) => {
      const w = await worldIn(setB, c.currency, c.price);
      const id = await signedSubscription(w, 2);
      const session = await openCheckout(w, id);
      const sent = proxy.requests.filter(
        (r) => r.path === '/v1/checkout/sessions' && r.form.get('client_reference_id') === id,
      );
      expect(
        sent.map((r) => [
          r.form.get('line_items[0][price_data][unit_amount]'),
          r.form.get('line_items[0][price_data][currency]'),
        ]),
      ).toEqual([[String(c.stripe), c.currency.toLowerCase()]]);
      const paid = await sendStripeEvent(setB, `evt_paid_${id}`, 'checkout.session.completed', {
        id: session.session_id,
        object: 'checkout.session',
        mode: 'payment',
        status: 'complete',
        payment_status: 'paid',
        amount_total: c.stripe,
        currency: c.currency.toLowerCase(),
        payment_intent: `pi_${id.slice(0, 8)}`,
        metadata: { subscription_id: id },
      });
      expect(paid.body.data?.outcome).toBe('signalled');
      await reaches(w, id, { status: 'pending_review', payment_status: 'received' });
    },
  );

  it.each(CASES)('Set A: the collection after approval charges $stripe minor units for $total $currency', async (c) => {
    const w = await worldIn(setA, c.currency, c.price);
    const id = await signedSubscription(w, 2);
    await w.api.post(`/issuance/subscriptions/${id}/create-setup-session`, w.investor.token, {
      paymentMethod: 'card',
      ...RETURN_URLS,
    });
    expect((await w.api.post(`/issuance/subscriptions/${id}/finalize-setup`, w.investor.token)).status).toBe(200);
    await w.api.post(`/issuance/subscriptions/${id}/submit-for-review`, w.investor.token, {});
    expect((await w.api.post(`/issuance/subscriptions/${id}/approve`, w.staff.token)).status).toBe(200);
    await reaches(w, id, { status: 'approved', payment_status: 'processing' });
    const charged = proxy.requests.filter(
      (r) => r.path === '/v1/payment_intents' && r.form.get('metadata[subscription_id]') === id,
    );
    expect(charged.map((r) => [r.form.get('amount'), r.form.get('currency')])).toEqual([
      [String(c.stripe), c.currency.toLowerCase()],
    ]);
  });
});
