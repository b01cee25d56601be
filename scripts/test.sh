#!/usr/bin/env bash
# The whole test suite, both behaviour sets, on the real stack. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
# Every tool a test runs is built here, before the first test starts, never inside a test's hook
# (a fresh machine builds them once, about 13 minutes cold, and promtool about 10 more on a loaded host;
# test/support/tools.ts reads the paths).
tool() {
  local started=$SECONDS path
  echo "[test] tool $1 ..." >&2
  path="$(bash scripts/tools.sh "$1")"
  echo "[test] tool $1 ready ($((SECONDS - started)) s)" >&2
  printf '%s' "$path"
}
export TEMPORAL_TEST_SERVER="$(tool test-server)"
export CHROMIUM_PATH="$(tool chromium)"
export CADDY_PATH="$(tool caddy)"
export ZIPKIN_JAR="$(tool zipkin)"
export STRIPE_MOCK_PATH="$(tool stripe-mock)"
export SCHEMATHESIS_PATH="$(tool schemathesis)"
export PROMTOOL_PATH="$(tool promtool)"
tool compose > /dev/null
tool temporal-server > /dev/null # test-cluster.sh exports its folder for the full-server part
tool temporal-ui > /dev/null
if [ -z "${TEMPORAL_ADDRESS:-}" ]; then export TEMPORAL_CLI="$(tool temporal)"; fi
npx tsc --noEmit
npx eslint .
npx prettier --check --log-level warn .
npm run -s lint:architecture   # each folder imports only what .dependency-cruiser.cjs allows; no circle
npm run -s lint:unused         # no unused file, export or dependency (knip.json); no export only tests use
                               # (knip --production; `@internal` marks one exported for its tests); every config key read
npm run -s lint:names          # a file's name says one thing across the tree
npm run -s lint:pointers       # every path a comment, record or doc names exists; no "issue N" in code
npm run -s lint:docs           # the configuration page is what the settings schema writes; CI runs every README block
npm run -s lint:migrations     # each migration since the previous release is additive for it (docs/decisions/0389)
# What runs in both delivery shapes: the webhook suites and the contract tests that deliver
# (delivery-shape, organisation-share, gate-turns and begun-first-attempt set their own shape, and
# start-path-walk calls the workflow shape's start path by hand, and parent-children-limit sets the
# workflow shape, so they run once; throttled-sleep runs alone in each, after the others).
# parked-slots.test.ts runs in the default shape only (the dispatcher's slots it tests are the engine
# shape's). isolation.test.ts runs in both since docs/decisions/0340-workflow-starts-within-the-endpoints-room.md.
WEBHOOK_SHAPE_SUITES="test/webhooks test/contract/client.test.ts test/contract/idempotency-commands.test.ts test/contract/idempotency-secrets.test.ts test/contract/idempotency-outcome-unknown.test.ts test/contract/idempotency-payment-sessions.test.ts --testPathIgnorePatterns delivery-shape parked-slots organisation-share gate-turns throttled-sleep start-path-walk begun-first-attempt parent-children-limit"
if [ $# -gt 0 ] || [ "${TRANCHE_TEST_TEMPORAL:-}" = cluster ]; then
  exec npx tsx scripts/with-stack.ts -- npx jest "$@"
fi
# The whole suite: on the dev server (in the shape the environment names, `engine` by default), the
# webhook suites again in the other delivery shape (docs/decisions/0297-webhook-delivery-shape-as-a-setting.md),
# then the production-shape part on the full server.
# Three suites run alone, after the rest. parked-slots.test.ts times a tail: it holds another
# organisation's p99 under 100 ms, and beside a second test file's stack on two cores it measured
# that file's load instead (p99 209 ms beside one, 42 ms alone), as a benchmark beside a suite would.
# throttled-sleep.test.ts times a rate limit as the receiver's clock sees it: beside another suite
# two arrivals came 456 ms apart where 1/s spaces the starts 1,020 ms (CI, the receiver's and the
# sender's processes starved of the two cores), and beside gate-turns.test.ts its timers woke past
# their reservations. gate-turns.test.ts bursts 400 delivery workflows: beside another suite its own
# burst had not begun in 30 s. parent-children-limit.test.ts starts 2,100 delivery workflows for one
# subscription (docs/decisions/0367-temporal-limits-kept.md): beside another suite both would measure the
# other's load.
ALONE_SUITES="test/webhooks/parked-slots.test.ts test/webhooks/gate-turns.test.ts test/webhooks/throttled-sleep.test.ts test/webhooks/parent-children-limit.test.ts"
npx tsx scripts/with-stack.ts -- npx jest --testPathIgnorePatterns /node_modules/ /test/cluster/ parked-slots gate-turns throttled-sleep parent-children-limit
echo "[test] the suites that run alone: $ALONE_SUITES"
npx tsx scripts/with-stack.ts -- npx jest --maxWorkers=1 $ALONE_SUITES
other_shape=workflow
if [ "${WEBHOOK_DELIVERY_SHAPE:-engine}" = workflow ]; then other_shape=engine; fi
echo "[test] webhook suites again with WEBHOOK_DELIVERY_SHAPE=$other_shape"
WEBHOOK_DELIVERY_SHAPE="$other_shape" npx tsx scripts/with-stack.ts -- npx jest $WEBHOOK_SHAPE_SUITES
echo "[test] alone, with WEBHOOK_DELIVERY_SHAPE=$other_shape: test/webhooks/throttled-sleep.test.ts"
WEBHOOK_DELIVERY_SHAPE="$other_shape" npx tsx scripts/with-stack.ts -- npx jest --maxWorkers=1 test/webhooks/throttled-sleep.test.ts
exec bash scripts/test-cluster.sh
