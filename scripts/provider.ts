/**
 * Acts as the verification provider against a running service (npm start), which trusts the
 * documented development secret (scripts/lib/embedded-defaults.ts) unless
 * IDENTITY_PROVIDER_WEBHOOK_SECRET says otherwise:
 *
 *   npm run -s provider -- kyc <session_or_attempt_id> <action>      e.g. pii_submitted, approve
 *   npm run -s provider -- accreditation <id> <action>
 *
 * --url overrides the service address (default http://localhost:$PORT or 3000).
 */
import { parseArgs } from 'node:util';
import { DEV_PROVIDER_SECRET } from './lib/embedded-defaults';
import { providerNotify } from './lib/provider-notify';

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: 'string', default: `http://localhost:${process.env.PORT ?? 3000}` },
      reason: { type: 'string' },
    },
  });
  const [kind, id, action] = positionals;
  if ((kind !== 'kyc' && kind !== 'accreditation') || !id || !action) {
    throw new Error('usage: npm run -s provider -- kyc|accreditation <id> <action>');
  }
  const secret = process.env.IDENTITY_PROVIDER_WEBHOOK_SECRET ?? DEV_PROVIDER_SECRET;
  const res = await providerNotify(values.url, secret, {
    kind,
    id,
    action,
    ...(values.reason ? { reason: values.reason } : {}),
  });
  if (res.status !== 200)
    throw new Error(
      `the service answered ${res.status} ${res.body.error?.code ?? ''}: ${res.body.error?.message ?? ''}`,
    );
  process.stdout.write(`${JSON.stringify(res.body.data, null, 2)}\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`provider: ${err.message}\n`);
  process.exit(1);
});
