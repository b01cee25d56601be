#!/usr/bin/env bash
# The whole test suite, both behaviour sets, on the real stack. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
export TEMPORAL_TEST_SERVER="$(bash scripts/tools.sh test-server)"
export CHROMIUM_PATH="$(bash scripts/tools.sh chromium)"
bash scripts/tools.sh compose > /dev/null
if [ -z "${TEMPORAL_ADDRESS:-}" ]; then export TEMPORAL_CLI="$(bash scripts/tools.sh temporal)"; fi
npx tsc --noEmit
npx eslint .
npx prettier --check --log-level warn .
npm run -s lint:architecture   # each folder imports only what .dependency-cruiser.cjs allows; no circle
npm run -s lint:unused         # no unused file, export or dependency (knip.json)
if [ $# -gt 0 ] || [ "${TRANCHE_TEST_TEMPORAL:-}" = cluster ]; then
  exec npx tsx scripts/with-stack.ts -- npx jest "$@"
fi
# The whole suite: on the dev server, then the production-shape part on the full server.
npx tsx scripts/with-stack.ts -- npx jest
exec bash scripts/test-cluster.sh
