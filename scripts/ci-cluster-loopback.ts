/**
 * CI, against `npm run cluster` as .ci/start-clean.sh brought it up: a staff member of a fresh
 * organisation cannot aim an endpoint at the machine's own ports (Temporal's frontend here), since
 * the command no longer allows loopback targets unless WEBHOOK_ALLOW_INSECURE_LOOPBACK asks
 * (docs/decisions/0261-cluster-and-compose-closed.md). Signs its token with the cluster's own key.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AccessTokens } from '../identity';

async function main(): Promise<number> {
  const dataDir = process.env.TRANCHE_DATA_DIR ?? join(__dirname, '..', '.data', 'cluster');
  const secrets = JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8')) as Record<string, string>;
  const tokens = await AccessTokens.create({ privateKeyPem: secrets.ACCESS_TOKEN_PRIVATE_KEY, ttlSeconds: 300 });
  const token = await tokens.sign({ userId: 'ci', orgId: randomUUID(), roles: ['staff'], kycCompleted: false });
  const res = await fetch(`http://127.0.0.1:${process.env.PORT ?? 3000}/notifications/webhook-endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'http://127.0.0.1:7233/', description: 'loopback', eventTypes: ['*'] }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as { error?: { code?: string } };
  if (res.status === 400 && body.error?.code === 'INVALID_WEBHOOK_URL') {
    console.error('[ci] npm run cluster refused a loopback webhook target');
    return 0;
  }
  console.error(`[ci] npm run cluster took a loopback webhook target: ${res.status} ${JSON.stringify(body)}`);
  return 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
