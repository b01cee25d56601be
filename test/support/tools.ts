/**
 * The pinned external tools a test runs, by the path scripts/test.sh exported after building them all
 * (scripts/tools.sh), before the first test starts: a test never builds a tool inside a hook with a
 * timeout, where a fresh machine's cold build would outlast it.
 */
const VARIABLES = {
  caddy: 'CADDY_PATH',
  chromium: 'CHROMIUM_PATH',
  promtool: 'PROMTOOL_PATH',
  schemathesis: 'SCHEMATHESIS_PATH',
  'stripe-mock': 'STRIPE_MOCK_PATH',
  'test-server': 'TEMPORAL_TEST_SERVER',
  zipkin: 'ZIPKIN_JAR',
} as const;

export function toolPath(name: keyof typeof VARIABLES): string {
  const variable = VARIABLES[name];
  const path = process.env[variable];
  if (!path) throw new Error(`${variable} is not set: run the tests with \`npm test\`, which builds ${name} first`);
  return path;
}
