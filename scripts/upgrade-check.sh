#!/usr/bin/env bash
# npm run upgrade-check: the rolling-upgrade test (test/cluster/rolling-upgrade.test.ts, docs/decisions/0388-the-previous-release.md)
# at an operator's scale: the production shape on the full Temporal server, started on the previous release
# (deploy/previous-release, built outside the clone by scripts/previous-release.sh), rolled to this checkout's
# build one worker and one API instance at a time, then rolled back. Its report (subscriptions in flight,
# deliveries sent and received, API answers by status, the roll's steps) is printed and kept in
# test-output/upgrade-check.json. CI runs it scaled down (scripts/test-cluster.sh). UPGRADE_PER_STATE (default
# here 6 subscriptions per set and waiting state) and UPGRADE_PINGS_PER_SECOND (5 per set) scale it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
export TEMPORAL_SERVER_DIR="$(bash scripts/tools.sh temporal-server)"
export TEMPORAL_CLI="$(bash scripts/tools.sh temporal)"
export PREVIOUS_RELEASE_DIR="$(bash scripts/previous-release.sh)"
bash scripts/ensure-build.sh
export UPGRADE_PER_STATE="${UPGRADE_PER_STATE:-6}" UPGRADE_PINGS_PER_SECOND="${UPGRADE_PINGS_PER_SECOND:-5}"
unset TEMPORAL_ADDRESS
exec npx tsx scripts/with-stack.ts -- npx jest --maxWorkers=1 --testPathIgnorePatterns /node_modules/ -- test/cluster/rolling-upgrade.test.ts
