#!/usr/bin/env bash
# The production-shape tests (docs/decisions/0139-production-shape-tests.md): test/cluster (npm run cluster's
# shape under faults) and the subscription lifecycle in both sets, all on the full Temporal server on
# PostgreSQL instead of the dev server. scripts/test.sh runs this after the main suite; arguments replace the
# default files.
set -euo pipefail
cd "$(dirname "$0")/.."
export TEMPORAL_SERVER_DIR="$(bash scripts/tools.sh temporal-server)"
export TRANCHE_TEST_TEMPORAL=cluster
unset TEMPORAL_ADDRESS
if [ $# -eq 0 ]; then set -- test/cluster test/subscriptions/lifecycle.test.ts; fi
# The rolling-upgrade test rolls from the previous release, built outside the clone, to this checkout's dist/.
if [[ " $* " == *" test/cluster "* || " $* " == *rolling-upgrade* ]]; then
  bash scripts/ensure-build.sh
  export PREVIOUS_RELEASE_DIR="${PREVIOUS_RELEASE_DIR:-$(bash scripts/previous-release.sh)}"
fi
exec bash scripts/test.sh "$@"
