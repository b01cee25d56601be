import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { createPaymentActivities } from '../../activities/payments';
import { PaymentRefused } from '../../domain/payment-processor';
import { ConfigError, loadConfig } from '../../lib/runtime/config';
import { migrate, openOrm, type Orm } from '../../db/orm';
import { paymentReferences } from '../../payments/payment-references';
import { sandboxSecret, signSandboxBody, verifySandboxSignature } from '../../payments/sandbox/signature';
import { stripeClient } from '../../payments/stripe/stripe-client';
import { createStripeProcessor } from '../../payments/stripe/stripe-processor';
import { fromStripeAmount, toStripeAmount } from '../../payments/stripe/stripe-amounts';
import { freshDatabase } from '../support/service';
import { startStripeMock } from './stripe-mock';

describe('sandbox notification signatures', () => {
  const secret = 'a-sandbox-secret-of-at-least-32-characters';
  const body = '{"id":"evt_1","type":"payment.succeeded"}';

  it('verifies its own signature and refuses a changed body, another secret, a stale timestamp or garbage', () => {
    const header = signSandboxBody(secret, body);
    expect(verifySandboxSignature(secret, body, header)).toBe(true);
    expect(verifySandboxSignature(secret, body.replace('succeeded', 'failed'), header)).toBe(false);
    expect(verifySandboxSignature('another-secret-of-at-least-32-characters', body, header)).toBe(false);
    const sixMinutesAgo = Date.now() - 6 * 60 * 1000;
    expect(verifySandboxSignature(secret, body, signSandboxBody(secret, body, sixMinutesAgo))).toBe(false);
    expect(verifySandboxSignature(secret, body, '')).toBe(false);
    expect(verifySandboxSignature(secret, body, 't=abc,v1=zz')).toBe(false);
  });
});

describe('payment configuration', () => {
  const base = { DATABASE_URL: 'postgres://u:p@localhost:5432/db', NODE_ENV: 'development' };

  it('runs the sandbox by default and refuses Stripe without its keys', () => {
    expect(loadConfig(base).PAYMENT_PROCESSOR).toBe('sandbox');
    expect(() => loadConfig({ ...base, PAYMENT_PROCESSOR: 'stripe' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, PAYMENT_PROCESSOR: 'stripe', STRIPE_SECRET_KEY: 'sk_test_x' })).toThrow(
      /STRIPE_WEBHOOK_SECRET/,
    );
  });

  it('refuses the sandbox in production without a notification secret of its own', () => {
    const production = {
      ...base,
      NODE_ENV: 'production',
      ACCESS_TOKEN_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----x',
      WEBHOOK_SECRET_KEY: Buffer.alloc(32).toString('base64'),
      PAYMENTS_SANDBOX_IN_PRODUCTION: 'true',
    };
    expect(() => loadConfig(production)).toThrow(/SANDBOX_NOTIFICATION_SECRET/);
    // Nor, past the config, does the sandbox fall back to its public development constant.
    expect(() => sandboxSecret({ NODE_ENV: 'production', SANDBOX_NOTIFICATION_SECRET: undefined })).toThrow(
      /SANDBOX_NOTIFICATION_SECRET is required in production/,
    );
  });
});

describe('money to Stripe', () => {
  it('crosses as exact integer minor units of the currency, never through a float', () => {
    expect(toStripeAmount('50.00', 'USD')).toBe(5000);
    expect(toStripeAmount('0.1', 'usd')).toBe(10);
    expect(toStripeAmount('1234567.89', 'USD')).toBe(123456789);
    expect(() => toStripeAmount('1.005', 'USD')).toThrow(RangeError);
    expect(toStripeAmount('1000', 'JPY')).toBe(1000);
    expect(() => toStripeAmount('1000.5', 'JPY')).toThrow(RangeError);
    expect(toStripeAmount('12.340', 'BHD')).toBe(12340);
    // Stripe's own rules: a three-decimal amount ends in 0, ISK carries two zero places.
    expect(() => toStripeAmount('12.345', 'BHD')).toThrow(/steps of 0.010/);
    expect(toStripeAmount('500', 'ISK')).toBe(50000);
    expect([fromStripeAmount(50000, 'isk'), fromStripeAmount(2000, 'jpy'), fromStripeAmount(24690, 'bhd')]).toEqual([
      '500',
      '2000',
      '24.690',
    ]);
  });
});

describe('the Stripe adapter at its edges', () => {
  let mock: Awaited<ReturnType<typeof startStripeMock>>;
  let orm: Orm;

  beforeAll(async () => {
    mock = await startStripeMock({ completedSessions: false });
    orm = await openOrm({ DATABASE_URL: await freshDatabase(), DATABASE_POOL_MAX: 2 });
    await migrate(orm);
  }, 600_000);
  afterAll(async () => {
    await orm?.close();
    await mock?.stop();
  });

  it('reads a setup session the investor has not finished as open, with no payment method', async () => {
    const stripe = stripeClient({
      STRIPE_SECRET_KEY: 'sk_test_edges',
      STRIPE_API_URL: mock.url,
      STRIPE_TIMEOUT_MS: 5000,
    });
    const processor = createStripeProcessor(stripe, paymentReferences(orm, 'stripe'));
    const subscriptionId = '7d0f3a52-3f7e-4c36-9d43-0c4f5f1d2a10';
    const session = await processor.createSetupSession({
      subscriptionId,
      investorId: 'user-1',
      method: 'card',
      currency: 'USD',
      successUrl: 'https://i.example/s',
      cancelUrl: 'https://i.example/c',
    });
    expect(session.sessionId).toMatch(/^cs_/);
    expect(await paymentReferences(orm, 'stripe').subscriptionOf(session.sessionId)).toBe(subscriptionId);
    expect(await processor.getSetupResult(session.sessionId)).toEqual({ status: 'open', paymentMethodRef: null });
  });

  it('refuses for good to collect without a linked payment method, and the activity does not retry it', async () => {
    const stripe = stripeClient({
      STRIPE_SECRET_KEY: 'sk_test_edges',
      STRIPE_API_URL: mock.url,
      STRIPE_TIMEOUT_MS: 5000,
    });
    const processor = createStripeProcessor(stripe, paymentReferences(orm, 'stripe'));
    const req = {
      subscriptionId: '7d0f3a52-3f7e-4c36-9d43-0c4f5f1d2a10',
      setupSessionId: 'cs_test_unfinished',
      amount: '50.00',
      currency: 'USD',
      idempotencyKey: 'collect-edges',
    };
    await expect(processor.collect(req)).rejects.toMatchObject({ name: 'PaymentRefused', code: 'NO_PAYMENT_METHOD' });
    await expect(processor.collect(req)).rejects.toBeInstanceOf(PaymentRefused);
    const failure = await createPaymentActivities(processor)
      .collectPayment(req)
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'NO_PAYMENT_METHOD', nonRetryable: true });
  });

  it('gives up on a Stripe that never answers within the configured timeout', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => void sockets.push(s)); // accepts, never answers
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as AddressInfo;
    try {
      const stripe = stripeClient({
        STRIPE_SECRET_KEY: 'sk_test_edges',
        STRIPE_API_URL: `http://127.0.0.1:${port}`,
        STRIPE_TIMEOUT_MS: 300,
      });
      const started = Date.now();
      await expect(stripe.customers.create({})).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(10_000); // three attempts of 300 ms plus the SDK's backoff
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  }, 30_000);
});
