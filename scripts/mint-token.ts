/**
 * From zero to a working access token against a running service (npm start), in one command:
 * the development identity provider mints an ID token (and an API key for the organisation), and
 * the real token exchange turns them into an access token.
 *
 *   npm run -s mint -- --user alice --org 00000000-0000-4000-8000-000000000001 --role investor
 *
 * Prints the access token (or, with --json, the API key, ID token and access token). Options:
 * --role may repeat; --url (default http://localhost:$PORT or 3000); --api-key reuses a key.
 */
import { parseArgs } from 'node:util';

const DEV_ORG = '00000000-0000-4000-8000-000000000001';

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const payload = (await res.json().catch(() => ({}))) as {
    data?: Record<string, unknown>;
    error?: { code: string; message: string };
  };
  if (!res.ok)
    throw new Error(`${url} answered ${res.status} ${payload.error?.code ?? ''}: ${payload.error?.message ?? ''}`);
  return payload.data!;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      user: { type: 'string', default: 'dev-user' },
      org: { type: 'string', default: DEV_ORG },
      role: { type: 'string', multiple: true, default: ['investor'] },
      url: { type: 'string', default: `http://localhost:${process.env.PORT ?? 3000}` },
      'api-key': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const base = values.url.replace(/\/$/, '');
  const minted = await post(`${base}/dev-idp/mint`, {
    user_id: values.user,
    org_id: values.org,
    roles: values.role,
    api_key: !values['api-key'],
  });
  const apiKey = values['api-key'] ?? (minted.api_key as string);
  const exchanged = await post(`${base}/identity/auth/exchange`, { token: minted.id_token }, { 'x-api-key': apiKey });
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ api_key: apiKey, id_token: minted.id_token, ...exchanged }, null, 2)}\n`);
  } else {
    process.stdout.write(`${exchanged.access_token as string}\n`);
  }
}

main().catch((err: Error) => {
  process.stderr.write(`mint: ${err.message}\n(is the service running with the dev identity provider on? npm start)\n`);
  process.exit(1);
});
